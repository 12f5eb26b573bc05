/**
 * `loadgen run` in a child process for the fault-injection suite: its exit
 * code, stdout, stderr, and its peak resident memory (VmHWM, read from
 * /proc while it runs: the last reading before it exits is its peak so far).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { repoRoot } from '../helpers.js';
import { API_KEY } from './harness.js';

export const CLI = join(repoRoot, 'dist', 'cli.js');
/** The variable the CLI reads the key from (--api-key-env). */
export const KEY_ENV = 'LOADGEN_FAULTS_KEY';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Peak RSS in bytes (0 where /proc cannot be read). */
  peakRss: number;
}

/** kB of a /proc/<pid>/status field, or 0. */
function statusKb(pid: number, field: string): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]);
  } catch {
    return 0;
  }
}

/** Runs `loadgen run ...args` with the API key in KEY_ENV; never blocks this process's servers. */
export function runCli(args: readonly string[], timeoutMs = 60_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'run', ...args], { env: { ...process.env, [KEY_ENV]: API_KEY }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peakKb = 0;
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const poll = setInterval(() => {
      peakKb = Math.max(peakKb, statusKb(child.pid!, 'VmHWM'));
    }, 10);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    // 'exit' comes before the pipes close: the last reading of a process that is still there.
    child.on('exit', () => clearInterval(poll));
    child.on('close', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      resolve({ code, stdout, stderr, peakRss: peakKb * 1024 });
    });
  });
}
