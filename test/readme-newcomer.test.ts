/**
 * What a newcomer does with the README (issue 25, "Done when"): its blocks
 * marked `<!-- run by test/readme-newcomer.test.ts -->`, in order — the demo,
 * the null run, the network run against `loadgen serve`, the tsconfig and
 * the TypeScript SUT, compiled and run — written into ONE bash script and
 * run through the real npx, in a project that has loadgen installed (a link
 * to this checkout, with typescript and @types/node from its node_modules).
 *
 * Substitutions, durations only and one folder: each `npx loadgen run` of
 * the demo block runs with `--set min_duration_ms=1000` (the README's runs
 * last ~10 s each), and its `/tmp/demo` becomes a folder of the project (a
 * test writes nothing outside its temporary folder).
 *
 * The demo's Offline and Server runs are judged by exit status 0 or 1 and a
 * summary written, not VALID: the Server rate is sized from the Offline run,
 * and on a loaded machine (2 shared cores running the suite) a run of 1 s can
 * miss its latency bound. Its AccuracyOnly run must match the reference (exit
 * 0). The null run must be VALID; the network run's verdict is not asserted
 * (its server shares the machine), only that it reached its server and wrote
 * a summary. The TypeScript SUT must compile, run and print its verdict
 * (VALID here when the machine is idle; not asserted, for the same reason).
 * LOADGEN_NEWCOMER_LOG=<file> writes the script's output there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { codeBlocks, markedProcesses, projectWithLoadgen, runScript, scriptEnv, where } from './docs-blocks.js';

const require = createRequire(import.meta.url);
const hasOrt = (() => {
  try {
    require.resolve('onnxruntime-node/package.json');
    return true;
  } catch {
    return false;
  }
})();
const linux = process.platform === 'linux';
const SCRIPT_TIMEOUT_MS = 420_000;

const ME = 'test/readme-newcomer.test.ts';

interface Part {
  name: string;
  /** the lines of the script for this part */
  script: string;
}

/** The README's blocks this test runs, in order, as the parts of one script. */
function newcomerParts(): Part[] {
  const blocks = codeBlocks('README.md').filter((b) => b.runBy === ME);
  const parts: Part[] = [];
  const files: string[] = [];
  for (const b of blocks) {
    const sub = (code: string) => `( ${code.trimEnd()}\n)\n`;
    const done = (name: string) => `echo "@@ part ${name} exit $?"\n`;
    if (b.lang === 'json' && /"compilerOptions"/.test(b.code)) {
      files.push(`cat > tsconfig.json <<'LOADGEN_README_EOF'\n${b.code}LOADGEN_README_EOF\n`);
    } else if (b.lang === 'ts') {
      const name = /"files": \["([^"]+)"\]/.exec(files.join(''))?.[1];
      if (name === undefined) throw new Error(`${where(b)}: no tsconfig block names the file before it`);
      files.push(`cat > ${name} <<'LOADGEN_README_EOF'\n${b.code}LOADGEN_README_EOF\n`);
    } else if (b.lang === 'sh' && /npx tsc/.test(b.code)) {
      parts.push({ name: 'typescript', script: files.join('') + sub(b.code) + done('typescript') });
    } else if (b.lang === 'sh' && /npx loadgen serve/.test(b.code)) {
      parts.push({ name: 'network', script: sub(b.code) + done('network') });
    } else if (b.lang === 'sh' && /--sut null/.test(b.code)) {
      parts.push({ name: 'null', script: sub(b.code) + done('null') });
    } else if (b.lang === 'sh' && /^npx loadgen run(\s|$)/m.test(b.code) && !/--sut/.test(b.code)) {
      // The demo: durations and /tmp/demo substituted (see above).
      const code = b.code
        .replace(/\/tmp\/demo/g, 'out/tmp-demo')
        .replace(/--set min_duration_ms=\d+ ?/g, '')
        .replace(/^npx loadgen run(?=\s|$)/gm, 'npx loadgen run --set min_duration_ms=1000');
      parts.push({ name: 'demo', script: sub(code) + done('demo') });
    } else {
      throw new Error(`${where(b)}: marked run by ${ME}, but this test has no rule for it`);
    }
  }
  return parts;
}

describe("the README's blocks, as a newcomer runs them", () => {
  it('are the demo, a null run, a network run and a TypeScript SUT, in that order', () => {
    expect(newcomerParts().map((p) => p.name)).toEqual(['demo', 'null', 'network', 'typescript']);
  });

  it.skipIf(!linux || !hasOrt)('run as one bash script: each part exits as it should and writes what it says', async () => {
    const parts = newcomerParts();
    const script = parts.map((p) => `echo "@@ part ${p.name} start"\n${p.script}`).join('');
    const project = projectWithLoadgen({ typescript: true });
    const marker = `LOADGEN_README_TEST=${process.pid}-${Date.now()}`;
    try {
      const { status, output } = await runScript(script, project, scriptEnv(project, marker), SCRIPT_TIMEOUT_MS);
      if (process.env.LOADGEN_NEWCOMER_LOG) (await import('node:fs')).writeFileSync(process.env.LOADGEN_NEWCOMER_LOG, output);
      const log = `--- script ---\n${script}\n--- output ---\n${output}`;
      expect(status, log).toBe(0);
      const exit = (name: string) => Number(new RegExp(`^@@ part ${name} exit (\\d+)$`, 'm').exec(output)?.[1] ?? NaN);
      const summary = (dir: string) => {
        const file = join(project, dir, 'mlperf_log_summary.txt');
        return existsSync(file) ? readFileSync(file, 'utf8') : `(no ${dir}/mlperf_log_summary.txt)`;
      };

      // The demo: the last command (AccuracyOnly) decides the part's status; every run wrote its summary.
      expect(exit('demo'), log).toBe(0);
      for (const dir of ['out/demo/Offline', 'out/demo/Server', 'out/tmp-demo/Offline', 'out/tmp-demo/Server']) {
        expect(summary(dir), `${dir}\n${log}`).toMatch(/Result is : (VALID|INVALID)/);
      }
      expect(existsSync(join(project, 'out/demo/Offline/accuracy/mlperf_log_accuracy.json')), log).toBe(true);
      expect(output).toMatch(/accuracy: 1024\/1024 outputs match the reference/);

      expect(exit('null'), log).toBe(0);
      expect(summary('out/server'), log).toMatch(/Result is : VALID/);

      expect(exit('network'), log).toBe(0);
      expect(output).not.toMatch(/ECONNREFUSED|EADDRINUSE|not reachable|did not come up|unknown option/);
      expect(summary('out/kserve-demo'), log).toMatch(/Result is : (VALID|INVALID)/);
      expect(summary('out/kserve-demo')).toMatch(/Network SUT \(kserve\)/);

      expect(exit('typescript'), log).toBe(0);
      expect(existsSync(join(project, 'my-sut.js')), log).toBe(true);
      // It ran: the verdict and the p99 printed (VALID on an idle machine; a 2-s Server run can miss its bound under load).
      expect(output, log).toMatch(/^(VALID|INVALID) \d+ \{/m);
      expect(summary('out'), log).toMatch(/Result is : (VALID|INVALID)/);
    } finally {
      for (const pid of markedProcesses(marker)) process.kill(pid, 'SIGKILL');
    }
  }, SCRIPT_TIMEOUT_MS + 20_000);
});
