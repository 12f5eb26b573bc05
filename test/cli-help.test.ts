/**
 * `loadgen --help` and the docs spell the command the same way, `npx
 * loadgen …` (issue 25): every usage line and example of every command's
 * help, and every command line in the code blocks of README.md and docs/*.md.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { docFiles } from './docs-blocks.js';
import { repoRoot } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');

function help(args: string[]): string {
  const r = spawnSync(process.execPath, [cli, ...args, '--help'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

describe('the spelling of the command', () => {
  it('is `npx loadgen` in every command\'s usage line and examples', () => {
    const top = help([]);
    expect(top).toMatch(/^Usage: npx loadgen /);
    const commands = [...top.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    expect(commands).toEqual(expect.arrayContaining(['run', 'serve', 'settings', 'trace', 'check', 'stats']));
    for (const command of commands) {
      const text = help([command]);
      expect(text, command).toMatch(new RegExp(`^Usage: npx loadgen ${command}\\b`));
      // Example lines: indented command lines after "Example(s):".
      const examples = text.split(/Examples?:\n/).slice(1).flatMap((block) => block.split('\n').filter((l) => /^ {2}\S/.test(l)));
      for (const line of examples) expect(line, `${command} --help`).toMatch(/^ {2}npx loadgen /);
    }
  });

  it('is `npx loadgen` in every command line of the code blocks of README.md and docs/*.md', () => {
    const bare: string[] = [];
    for (const file of docFiles()) {
      let inBlock = false;
      readFileSync(join(repoRoot, file), 'utf8').split('\n').forEach((line, i) => {
        if (line.startsWith('```')) inBlock = !inBlock;
        else if (inBlock && /^\s*loadgen /.test(line)) bare.push(`${file}:${i + 1}: ${line}`);
      });
    }
    expect(bare).toEqual([]);
  });
});
