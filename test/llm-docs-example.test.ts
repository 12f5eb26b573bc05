/**
 * docs/llm-benchmarks.md's "The whole flow from TypeScript" example, exactly
 * as the doc shows it: extracted, compiled with the repository's TypeScript
 * (strict, NodeNext) against the package as installed (node_modules/loadgen
 * -> this checkout's dist/), and run with Llama 3.1's tokenizer.json. So the
 * doc's code cannot rot: an API change it does not follow fails here.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { decodeTokenIds } from '../lib/datasets/accuracy-ids.js';
import { repoRoot, tempDir } from './helpers.js';
import { TOKENIZER_FILES } from './tokenizer/fixtures.js';

const MARKER = '// llm-flow.mts:';

/** The ```ts block of the doc that starts with the marker line. */
export function docExample(markdown: string): string {
  const blocks = [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((b) => b.startsWith(MARKER));
  if (blocks.length !== 1) throw new Error(`expected one \`\`\`ts block starting '${MARKER}' in docs/llm-benchmarks.md, found ${blocks.length}`);
  return blocks[0]!;
}

describe("docs/llm-benchmarks.md's TypeScript example of the whole LLM flow", () => {
  it('compiles under strict and runs against the stub: int32 ids in the log, scored against llama3_1-8b (gen_len fails: exit 1)', () => {
    const code = docExample(readFileSync(join(repoRoot, 'docs', 'llm-benchmarks.md'), 'utf8'));
    const project = tempDir('loadgen-llm-docs-example-');
    writeFileSync(join(project, 'llm-flow.mts'), code);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'llm-flow-example', type: 'module', private: true }));
    mkdirSync(join(project, 'node_modules'));
    // The package as a user's project sees it: its package.json's exports, dist/ and its declarations.
    symlinkSync(repoRoot, join(project, 'node_modules', 'loadgen'), 'dir');
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', outDir: 'out-js', skipLibCheck: true,
        typeRoots: [join(repoRoot, 'node_modules', '@types')], types: ['node'],
      },
      files: ['llm-flow.mts'],
    }));
    const tsc = spawnSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { cwd: project, encoding: 'utf8', timeout: 120_000 });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);

    const run = spawnSync(process.execPath, [join(project, 'out-js', 'llm-flow.mjs'), TOKENIZER_FILES.llama3_1], {
      cwd: project, encoding: 'utf8', timeout: 120_000, env: { ...process.env, OPENAI_API_KEY: '', NLTK_DATA: '/nonexistent-nltk-data' },
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`2 responses logged in ${join('out', 'mlperf_log_accuracy.json')}`);
    expect(run.stdout).toContain('Log data:     token ids (int32, decoded with special tokens skipped, tokenization spaces cleaned up)');
    expect(run.stdout).toMatch(/Targets of llama3_1-8b:[\s\S]*FAIL\s+gen_len/);
    // MLCommons' reading of the log: int32 ids, 32 a sample (the stub repeats the prompt's tokens).
    const log = JSON.parse(readFileSync(join(project, 'out', 'mlperf_log_accuracy.json'), 'utf8')) as { qsl_idx: number; data: string }[];
    expect(log).toHaveLength(2);
    for (const r of log) expect(decodeTokenIds(Buffer.from(r.data, 'hex'), 'int32')).toHaveLength(32);
  }, 180_000);
});
