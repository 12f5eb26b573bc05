/**
 * The README's network blocks work pasted into a non-interactive bash script
 * (issue 25): each group of blocks from a `npx loadgen serve … &` to the
 * `kill` that stops it runs as one script, through the real npx, in a
 * project that has loadgen installed (a link to this checkout). Servers
 * listen on 127.0.0.1 only; the script and every process it starts are
 * bounded in time. After the script, every server it started must have
 * exited on its own (npx passes no signal on: each exits when its npx does).
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { repoRoot, tempDir } from './helpers.js';

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

/** The README's sh blocks from each `npx loadgen serve … &` through the block that kills it, each group one script. */
function networkScripts(readme: string): string[] {
  const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  const scripts: string[] = [];
  let current: string[] | undefined;
  for (const block of blocks) {
    if (current === undefined && /^npx loadgen serve .*&/m.test(block)) current = [];
    if (current === undefined) continue;
    current.push(block);
    if (/^kill /m.test(block)) {
      scripts.push(current.join(''));
      current = undefined;
    }
  }
  if (current !== undefined) throw new Error(`a README block starts a server that no later block stops:\n${current.join('')}`);
  return scripts;
}

/** Pids of the processes whose environment holds `marker` (this test's: every process a script started). */
function markedProcesses(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(marker)) pids.push(Number(name));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

/** A project with loadgen installed: node_modules/loadgen links to this checkout, .bin/loadgen runs its CLI. */
function projectWithLoadgen(): string {
  const dir = tempDir('loadgen-readme-');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'readme-network', private: true, dependencies: { loadgen: '*' } }));
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(repoRoot, join(dir, 'node_modules', 'loadgen'), 'dir');
  const bin = join(dir, 'node_modules', '.bin', 'loadgen');
  writeFileSync(bin, `#!/bin/sh\nexec '${process.execPath}' '${join(repoRoot, 'dist', 'cli.js')}' "$@"\n`);
  chmodSync(bin, 0o755);
  return dir;
}

function runScript(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; output: string }> {
  return new Promise((resolveRun) => {
    const child = spawn('bash', ['-c', `set -u\n${script}`], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      output += `\n[test: the script ran past ${SCRIPT_TIMEOUT_MS} ms; killed]`;
      process.kill(-child.pid!, 'SIGKILL');
    }, SCRIPT_TIMEOUT_MS);
    // 'exit', not 'close': a server left running would hold the output pipes open.
    child.on('exit', (status) => {
      clearTimeout(timer);
      setTimeout(() => resolveRun({ status, output }), 50);
    });
  });
}

describe('README network blocks', () => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

  it('are grouped into scripts that start servers on distinct ports', () => {
    const scripts = networkScripts(readme);
    expect(scripts.length).toBeGreaterThanOrEqual(3);
    const ports = scripts.flatMap((s) => [...s.matchAll(/npx loadgen serve .*--port (\d+)/g)].map((m) => Number(m[1])));
    expect(new Set(ports).size, `ports ${ports.join(', ')}`).toBe(ports.length);
    for (const script of scripts) {
      expect(script).not.toMatch(/%\d/);  // job control (kill %1) does not work in a script
      for (const url of script.matchAll(/--url (\S+)/g)) expect(url[1]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    }
  });

  it.skipIf(!linux || !hasOrt)('run as bash scripts: every run reaches its server, and every server exits once its npx is killed', async () => {
    const scripts = networkScripts(readme);
    const project = projectWithLoadgen();
    const marker = `LOADGEN_README_TEST=${process.pid}-${Date.now()}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      // npx's own cache, offline: nothing is downloaded, and other npx users are not disturbed.
      npm_config_cache: join(project, '.npm-cache'),
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      LOADGEN_README_TEST: marker.slice(marker.indexOf('=') + 1),
    };
    try {
      for (const script of scripts) {
        const { status, output } = await runScript(script, project, env);
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
