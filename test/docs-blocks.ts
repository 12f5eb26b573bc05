/**
 * The fenced code blocks of README.md and docs/*.md, for the tests that keep
 * them working (docs-code-blocks, readme-newcomer, readme-network). A block
 * may carry one HTML comment on the line right above its fence:
 *
 * - `<!-- not run: why -->`: the block is not run (it clones, publishes, needs
 *   a GPU, a real server, files the page does not make, ...); a shell block
 *   is still parsed with `bash -n` and its `npx loadgen` flags checked;
 * - `<!-- run by test/<file> -->`: another test runs it (that file must exist).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { repoRoot, tempDir } from './helpers.js';

export interface CodeBlock {
  /** README.md or docs/<page>.md */
  file: string;
  /** 1-based line of the opening fence */
  line: number;
  /** the info string after the fence: sh, ts, text, ... ('' when none) */
  lang: string;
  code: string;
  /** the reason of a `<!-- not run: ... -->` comment right above the fence */
  notRun?: string;
  /** the test file of a `<!-- run by test/... -->` comment right above the fence */
  runBy?: string;
}

/** README.md, then docs/*.md in name order. */
export function docFiles(): string[] {
  const docs = readdirSync(join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

export function codeBlocks(file: string, text = readFileSync(join(repoRoot, file), 'utf8')): CodeBlock[] {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    if (end === lines.length) throw new Error(`${file}:${i + 1}: a code block that is never closed`);
    const block: CodeBlock = { file, line: i + 1, lang: open[1]!, code: lines.slice(i + 1, end).join('\n') + '\n' };
    const above = i > 0 ? lines[i - 1]!.trim() : '';
    const notRun = /^<!--\s*not run:\s*(.*?)\s*-->$/.exec(above);
    const runBy = /^<!--\s*run by (test\/\S+)\s*-->$/.exec(above);
    if (notRun) block.notRun = notRun[1]!;
    if (runBy) block.runBy = runBy[1]!;
    blocks.push(block);
    i = end;
  }
  return blocks;
}

export function allCodeBlocks(): CodeBlock[] {
  return docFiles().flatMap((f) => codeBlocks(f));
}

export const where = (b: CodeBlock): string => `${b.file}:${b.line}`;

/**
 * The `npx loadgen` command lines of a shell block, continuation lines
 * joined, comments dropped: [command, ...words] per line.
 */
export function loadgenCommands(code: string): { command: string; words: string[]; text: string }[] {
  const joined = code.replace(/\\\n/g, ' ');
  const out: { command: string; words: string[]; text: string }[] = [];
  for (const raw of joined.split('\n')) {
    for (const m of raw.matchAll(/(?:^|[;&|(]\s*|&&\s*)npx loadgen((?:\s+(?:'[^']*'|"[^"]*"|[^\s;&|#)]+))*)/g)) {
      const words = [...m[1]!.matchAll(/'[^']*'|"[^"]*"|[^\s]+/g)].map((w) => w[0]);
      const command = words[0] !== undefined && !words[0].startsWith('-') ? words[0] : '';
      out.push({ command, words, text: raw.trim() });
    }
  }
  return out;
}

/** Pids of the processes whose environment holds `marker` (a test's: every process a script it ran started). */
export function markedProcesses(marker: string): number[] {
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

/**
 * A project with loadgen installed: node_modules/loadgen links to this
 * checkout, .bin/loadgen runs its CLI; with `typescript`, also typescript,
 * @types/node and .bin/tsc from this checkout's node_modules.
 */
export function projectWithLoadgen(options: { typescript?: boolean } = {}): string {
  const dir = tempDir('loadgen-readme-');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'readme-project', private: true, type: 'module', dependencies: { loadgen: '*' } }));
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(repoRoot, join(dir, 'node_modules', 'loadgen'), 'dir');
  const bin = (name: string, script: string) => {
    const file = join(dir, 'node_modules', '.bin', name);
    writeFileSync(file, `#!/bin/sh\nexec '${process.execPath}' '${script}' "$@"\n`);
    chmodSync(file, 0o755);
  };
  bin('loadgen', join(repoRoot, 'dist', 'cli.js'));
  if (options.typescript) {
    symlinkSync(join(repoRoot, 'node_modules', 'typescript'), join(dir, 'node_modules', 'typescript'), 'dir');
    mkdirSync(join(dir, 'node_modules', '@types'));
    symlinkSync(join(repoRoot, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir');
    bin('tsc', join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'));
  }
  return dir;
}

/** Runs `script` with bash in its own process group, killed whole after `timeoutMs`; stdout and stderr together. */
export function runScript(script: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ status: number | null; output: string }> {
  return new Promise((resolveRun) => {
    const child = spawn('bash', ['-c', `set -u\n${script}`], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      output += `\n[test: the script ran past ${timeoutMs} ms; killed]`;
      process.kill(-child.pid!, 'SIGKILL');
    }, timeoutMs);
    // 'exit', not 'close': a server left running would hold the output pipes open.
    child.on('exit', (status) => {
      clearTimeout(timer);
      setTimeout(() => resolveRun({ status, output }), 50);
    });
  });
}

/** The environment for scripts that call the real npx: its own cache, offline, quiet; `marker` tags every process. */
export function scriptEnv(project: string, marker: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    // npx's own cache, offline: nothing is downloaded, and other npx users are not disturbed.
    npm_config_cache: join(project, '.npm-cache'),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    LOADGEN_README_TEST: marker.slice(marker.indexOf('=') + 1),
  };
}
