import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { querySamplesComplete, type QuerySample, type QuerySampleLibrary, type SystemUnderTest } from '../lib/index.js';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The reference's test vectors: ../shared/golden beside the repository, or LOADGEN_GOLDEN_DIR. */
export const goldenDir = process.env.LOADGEN_GOLDEN_DIR ? resolve(process.env.LOADGEN_GOLDEN_DIR) : resolve(repoRoot, '..', 'shared', 'golden');
export const hasGolden = existsSync(join(goldenDir, 'README.md'));

/** Throws, naming where it looked, when the golden vectors are absent: a test that needs them fails, never passes. */
export function requireGolden(): void {
  if (!hasGolden) {
    throw new Error(`golden test vectors not found at ${goldenDir} (no README.md there): they belong in ../shared/golden beside the repository; LOADGEN_GOLDEN_DIR names another folder`);
  }
}

export function tempDir(prefix = 'loadgen-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A QSL that records its calls. */
export function recordingQsl(total = 1024, performance = total): QuerySampleLibrary & { calls: string[]; loaded: number[][] } {
  const calls: string[] = [];
  const loaded: number[][] = [];
  return {
    name: 'recording-qsl',
    totalSampleCount: total,
    performanceSampleCount: performance,
    calls,
    loaded,
    async loadSamplesToRam(indices: number[]) {
      calls.push('load');
      loaded.push(indices);
      await new Promise((r) => setTimeout(r, 1));
    },
    unloadSamplesFromRam() {
      calls.push('unload');
    },
  };
}

/** A SUT completing every sample `delayMs` after it was issued (setTimeout). */
export function delayedSut(delayMs: number): SystemUnderTest & { received: QuerySample[][] } {
  const received: QuerySample[][] = [];
  return {
    name: `delayed-${delayMs}ms`,
    received,
    issueQuery(samples: QuerySample[]) {
      received.push(samples);
      setTimeout(() => querySamplesComplete(samples), delayMs);
    },
  };
}

/**
 * Reduces a summary file to its layout: every "label : value" line keeps its
 * label, values become <v>, and numbers inside free text become <n>.
 */
export function summaryLayout(text: string): string[] {
  return referencePart(text).split('\n').map((line) => {
    // The reference's warning count depends on its logger's timing (spec/60 §3.31).
    if (/^(No warnings|\d+ warnings?) encountered/.test(line)) return '<warnings footer>';
    const m = /^(.*?)(\s*:\s)(.*)$/.exec(line);
    if (m && !line.startsWith(' * ')) return `${m[1]}${m[2]}<v>`;
    return line.replace(/\d+(\.\d+)?/g, '<n>');
  });
}

/** The summary without loadgen's own overhead block (appended after the reference's lines). */
export function referencePart(summary: string): string {
  const at = summary.indexOf('\n================================================\nLoadgen Overhead');
  return at === -1 ? summary : summary.slice(0, at);
}

export function readText(path: string): string {
  return readFileSync(path, 'utf8');
}

/** What a CLI run printed and how it ended. */
export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node dist/cli.js ARGS` from the repository root without blocking the
 * test's event loop (servers the test started keep answering), with no
 * OPENAI_API_KEY from the caller's environment; killed after `timeoutMs`.
 */
export function runCli(args: string[], options: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<CliRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'dist', 'cli.js'), ...args], { cwd: repoRoot, env: { ...process.env, OPENAI_API_KEY: '', ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolvePromise({ status, stdout, stderr });
    });
  });
}
