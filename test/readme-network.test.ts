/**
 * The network blocks of docs/network-suts.md work pasted into a
 * non-interactive bash script (issue 25): each group of blocks from a
 * `npx loadgen serve … &` to the `kill` that stops it runs as one script,
 * through the real npx, in a project that has loadgen installed (a link to
 * this checkout). Servers listen on 127.0.0.1 only; the script and every
 * process it starts are bounded in time. After the script, every server it
 * started must have exited on its own (npx passes no signal on: each exits
 * when its npx does). README.md's own network block is run by
 * test/readme-newcomer.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { codeBlocks, markedProcesses, projectWithLoadgen, runScript, scriptEnv } from './docs-blocks.js';

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
const SCRIPT_TIMEOUT_MS = 240_000;
const SERVERS_GONE_MS = 10_000;
const PAGE = 'docs/network-suts.md';

/** The page's sh blocks from each `npx loadgen serve … &` through the block that kills it, each group one script. */
function networkScripts(): string[] {
  const blocks = codeBlocks(PAGE).filter((b) => b.lang === 'sh' && !b.notRun);
  const scripts: string[] = [];
  let current: string[] | undefined;
  for (const { code, runBy, line } of blocks) {
    if (current === undefined && /^npx loadgen serve .*&/m.test(code)) current = [];
    if (current === undefined) continue;
    if (runBy !== 'test/readme-network.test.ts') throw new Error(`${PAGE}:${line}: a network block this test runs is marked <!-- run by test/readme-network.test.ts -->`);
    current.push(code);
    if (/^kill /m.test(code)) {
      scripts.push(current.join(''));
      current = undefined;
    }
  }
  if (current !== undefined) throw new Error(`a ${PAGE} block starts a server that no later block stops:\n${current.join('')}`);
  return scripts;
}

describe(`${PAGE} network blocks`, () => {
  it('are grouped into scripts that start servers on distinct ports', () => {
    const scripts = networkScripts();
    expect(scripts.length).toBeGreaterThanOrEqual(3);
    const ports = scripts.flatMap((s) => [...s.matchAll(/npx loadgen serve .*--port (\d+)/g)].map((m) => Number(m[1])));
    expect(new Set(ports).size, `ports ${ports.join(', ')}`).toBe(ports.length);
    for (const script of scripts) {
      expect(script).not.toMatch(/%\d/);  // job control (kill %1) does not work in a script
      for (const url of script.matchAll(/--url (\S+)/g)) expect(url[1]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    }
  });

  it.skipIf(!linux || !hasOrt)('run as bash scripts: every run reaches its server, and every server exits once its npx is killed', async () => {
    const scripts = networkScripts();
    const project = projectWithLoadgen();
    const marker = `LOADGEN_README_TEST=${process.pid}-${Date.now()}`;
    const env = scriptEnv(project, marker);
    try {
      for (const script of scripts) {
        const { status, output } = await runScript(script, project, env, SCRIPT_TIMEOUT_MS);
        expect(status, output).toBe(0);
        expect(output).not.toMatch(/ECONNREFUSED|EADDRINUSE|not reachable|did not come up|unknown option/);
        for (const outdir of [...script.matchAll(/--outdir (\S+)/g)].map((m) => m[1]!)) {
          const summary = join(project, outdir, 'mlperf_log_summary.txt');
          expect(existsSync(summary), `${outdir}: no summary\n${output}`).toBe(true);
          expect(readFileSync(summary, 'utf8')).toMatch(/Result is : (VALID|INVALID)/);
        }
        // Every server the script started exits on its own once its npx is gone.
        const deadline = Date.now() + SERVERS_GONE_MS;
        while (markedProcesses(marker).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        const left = markedProcesses(marker);
        expect(left, `processes still running ${SERVERS_GONE_MS} ms after the script ended:\n${left.map((p) => readFileSync(`/proc/${p}/cmdline`, 'latin1').replace(/\0/g, ' ')).join('\n')}\n${output}`).toEqual([]);
      }
    } finally {
      for (const pid of markedProcesses(marker)) process.kill(pid, 'SIGKILL');
    }
  }, SCRIPT_TIMEOUT_MS * 4);
});
