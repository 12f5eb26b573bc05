import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { formatTokenizerBench, runTokenizerBench, type TokenizerBenchReport } from '../lib/bench/tokenizer.js';
import { generateNewsTexts } from '../lib/bench/tokenizer-texts.js';
import { repoRoot } from './helpers.js';

// Proves the tokenizer benchmark works; its figures are not asserted (shared,
// noisy machines): they are `npm run bench -- --tokenizer`'s to report.
describe('loadgen bench --tokenizer', () => {
  it('generates the same CNN-length texts on every machine (the benchmark input is fixed)', () => {
    const texts = generateNewsTexts(20);
    const words = texts.map((t) => t.split(/\s+/).length);
    expect(Math.min(...words)).toBeGreaterThanOrEqual(700);
    expect(Math.max(...words)).toBeLessThanOrEqual(900);
    expect(generateNewsTexts(20)).toEqual(texts);
    expect(createHash('sha256').update(texts.join('\u0000')).digest('hex').slice(0, 16)).toBe(EXPECTED_TEXTS_HASH);
  });

  it('measures the library loadgen uses and Rust tokenizers on the same texts, with identical ids', async () => {
    const report = await runTokenizerBench({ texts: 20, log: () => undefined });
    expect(report.texts).toBe(20);
    expect(report.tokens).toBeGreaterThan(20 * 700);
    expect(report.description).toContain('128,256 tokens');
    const [used, rust] = report.rows;
    expect(used!.chosen).toBe(true);
    expect(used!.library).toBe('@huggingface/tokenizers');
    for (const row of report.rows) {
      expect(row.skipped).toBeNull();
      for (const n of [row.loadMs, row.loadStallMs, row.encodeTokensPerSec, row.decodeTokensPerSec]) expect(Number.isFinite(n) && n! > 0, String(n)).toBe(true);
    }
    expect(rust!.textsWithOtherIds).toBe(0);
    const text = formatTokenizerBench(report);
    expect(text).toContain('@huggingface/tokenizers 0.2.0 (used)');
    expect(text).toContain('identical on all 20 texts');
  });

  it('prints a skipped row as a line that says why, and no figure for it', () => {
    const report: TokenizerBenchReport = {
      date: '2026-11-28T00:00:00.000Z',
      machine: { cpu: 'cpu', cpus: 2, node: 'v20', platform: 'linux-x64', loadAverage: [0, 0, 0] },
      file: 'tokenizer.json',
      description: 'BPE',
      texts: 1,
      characters: 10,
      tokens: 3,
      rows: [{ library: 'tokenizers (Rust, napi)', version: '-', chosen: false, skipped: 'not installed', loadMs: null, loadStallMs: null, encodeTokensPerSec: null, decodeTokensPerSec: null, batch: null, textsWithOtherIds: null }],
    };
    expect(formatTokenizerBench(report)).toMatch(/\ntokenizers \(Rust, napi\) - +skipped: not installed$/);
  });

  it('is a bench option of the CLI, refusing a tokenizer file that does not exist (exit 2)', () => {
    const r = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'bench', '--tokenizer', join(repoRoot, 'no-such-tokenizer.json'), '--tiny'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('no-such-tokenizer.json does not exist');
  });
});

const EXPECTED_TEXTS_HASH = '91da3a611f963744';
