/**
 * Every fenced code block of README.md and docs/*.md is checked, so none can
 * rot (issue 25). Per language:
 *
 * - ```sh / ```bash: parsed with `bash -n`; every `npx loadgen <command>`
 *   names a command that exists and only flags its `--help` lists; then run
 *   in a temporary folder with `npx loadgen` resolving to this checkout
 *   (node dist/cli.js), bounded in time, each command allowed exit 0 or 1
 *   (INVALID and NOT COMPLIANT are results), never 2 or more (bad input, a
 *   failed run); the `# ` comment lines right after a command are output it
 *   must print. A block that cannot run here carries `<!-- not run: why -->`
 *   right above it; one another test runs, `<!-- run by test/<file> -->`.
 * - ```ts: a block that imports from 'loadgen' is a whole program, compiled
 *   with tsc --strict (ESM, nodenext) against this checkout's declarations
 *   (scripts/test-pack.mjs compiles the same blocks against the packed
 *   package); any other needs `<!-- not run: why -->`.
 * - ```js: `node --check` as an ES module.
 * - ```json: JSON, or JSON lines.
 * - ```text: output samples and synopses; skipped.
 * Any other language, or a fence without one, fails: give it a rule here.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

import { describe, expect, it } from 'vitest';

import { allCodeBlocks, type CodeBlock, docFiles, loadgenCommands, where } from './docs-blocks.js';
import { repoRoot, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');
const BLOCK_TIMEOUT_MS = 120_000;

const blocks = allCodeBlocks();
const shell = (b: CodeBlock) => b.lang === 'sh' || b.lang === 'bash';

/** `npx loadgen [command] --help`, cached. */
const helpCache = new Map<string, string>();
function help(command: string): string {
  let text = helpCache.get(command);
  if (text === undefined) {
    const r = spawnSync(process.execPath, [cli, ...(command ? [command] : []), '--help'], { encoding: 'utf8', timeout: 30_000 });
    text = r.status === 0 ? r.stdout : '';
    helpCache.set(command, text);
  }
  return text;
}

/** What is wrong with the `npx loadgen` command lines of a shell block: an unknown command or flag. */
function cliProblems(code: string): string[] {
  const commands = new Set([...help('').matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1]!));
  const problems: string[] = [];
  for (const { command, words, text } of loadgenCommands(code)) {
    if (command !== '' && !commands.has(command)) {
      problems.push(`unknown command '${command}' in: ${text}`);
      continue;
    }
    const listed = help(command);
    for (const word of words) {
      const flag = /^(--[a-z0-9][a-z0-9-]*)/.exec(word)?.[1];
      if (flag === undefined || flag === '--help') continue;
      if (!new RegExp(`(^|[\\s,])${flag}(?![a-z0-9-])`, 'm').test(listed)) problems.push(`'${flag}' is not an option of 'npx loadgen ${command}' in: ${text}`);
    }
  }
  return problems;
}

/**
 * The output a shell block's comments show: the `# ` lines right after an
 * `npx loadgen` command (its continuation lines included), each without its
 * `# `; one ending in `...` is a line's beginning.
 */
function expectedOutput(code: string): string[] {
  const expected: string[] = [];
  let afterCommand = false;
  let continued = false;
  for (const line of code.split('\n')) {
    if (afterCommand && !continued && /^# /.test(line)) expected.push(line.slice(2).trimEnd());
    else {
      afterCommand = /npx loadgen /.test(line) || (afterCommand && continued);
      continued = /\\$/.test(line);
    }
  }
  return expected;
}

/** A folder whose PATH entry makes `npx loadgen` run this checkout's CLI (other npx calls go to the real npx). */
function npxShim(): string {
  const dir = tempDir('loadgen-docs-bin-');
  const realNpx = spawnSync('bash', ['-c', 'command -v npx'], { encoding: 'utf8' }).stdout.trim();
  const shim = join(dir, 'npx');
  writeFileSync(
    shim,
    `#!/bin/sh\nif [ "$1" = loadgen ]; then shift; exec '${process.execPath}' '${cli}' "$@"; fi\nexec '${realNpx}' "$@"\n`,
  );
  chmodSync(shim, 0o755);
  return dir;
}

describe('code blocks of README.md and docs/*.md', () => {
  it('each has a language this test has a rule for, and each marker is well-formed', () => {
    const rules = new Set(['sh', 'bash', 'ts', 'js', 'json', 'text']);
    const bad = blocks.filter((b) => !rules.has(b.lang)).map((b) => `${where(b)}: \`\`\`${b.lang} (no rule; output samples are \`\`\`text)`);
    expect(bad).toEqual([]);
    for (const b of blocks.filter((x) => x.notRun !== undefined)) expect(b.notRun!.length, `${where(b)}: say why it is not run`).toBeGreaterThan(10);
    for (const b of blocks.filter((x) => x.runBy !== undefined)) expect(existsSync(join(repoRoot, b.runBy!)), `${where(b)}: ${b.runBy}`).toBe(true);
    const counts = {
      blocks: blocks.length,
      runHere: blocks.filter((b) => shell(b) && !b.notRun && !b.runBy).length,
      runByOtherTests: blocks.filter((b) => b.runBy).length,
      notRun: blocks.filter((b) => b.notRun).length,
      text: blocks.filter((b) => b.lang === 'text').length,
    };
    console.log(`docs code blocks: ${JSON.stringify(counts)}`);
    for (const b of blocks.filter((x) => x.notRun)) console.log(`  not run ${where(b)}: ${b.notRun}`);
  });

  it('the output a comment shows is read from the lines after a command', () => {
    expect(expectedOutput('npx loadgen stats --x \\\n  --y\n# a: 1\n#   b ...\necho\n# not output\n')).toEqual(['a: 1', '  b ...']);
  });

  it('the CLI check catches an unknown command and an unknown flag', () => {
    expect(cliProblems('npx loadgen run --sut null --scenario Server --set min_duration_ms=10\n')).toEqual([]);
    expect(cliProblems('npx loadgen run --sut null --no-such-flag 1\n')).toEqual([
      "'--no-such-flag' is not an option of 'npx loadgen run' in: npx loadgen run --sut null --no-such-flag 1",
    ]);
    expect(cliProblems('npx loadgen frobnicate --x\n')).toEqual(["unknown command 'frobnicate' in: npx loadgen frobnicate --x"]);
    // Continuation lines, comments and quoted arguments.
    expect(cliProblems("npx loadgen run --sut null \\\n  --outdir out   # --not-a-flag here\n")).toEqual([]);
    expect(cliProblems("npx loadgen run --power-command 'cat --bogus' \\\n  --bogus2\n")).toEqual([
      "'--bogus2' is not an option of 'npx loadgen run' in: npx loadgen run --power-command 'cat --bogus'    --bogus2",
    ]);
  });

  it('command synopses in ```text blocks name commands and options that exist', () => {
    // A synopsis: a line starting `npx loadgen <command>` and the indented lines after it.
    const problems: string[] = [];
    let synopses = 0;
    for (const b of blocks.filter((x) => x.lang === 'text')) {
      const lines = b.code.split('\n');
      for (let i = 0; i < lines.length; i++) {
        if (!lines[i]!.startsWith('npx loadgen ')) continue;
        let text = lines[i]!.replace(/\s#\s.*$/, '');
        while (i + 1 < lines.length && /^\s+\S/.test(lines[i + 1]!)) text += ' ' + lines[++i]!.replace(/\s#\s.*$/, '').trim();
        const flags = [...text.matchAll(/(?<![\w-])--[a-z0-9][a-z0-9-]*/g)].map((m) => m[0]);
        problems.push(...cliProblems(`npx loadgen ${text.split(/\s+/)[2]} ${flags.join(' ')}\n`).map((p) => `${where(b)}: ${p}`));
        synopses++;
      }
    }
    expect(problems).toEqual([]);
    expect(synopses).toBeGreaterThanOrEqual(8);
  });

  const shellBlocks = blocks.filter(shell);
  it.each(shellBlocks.map((b) => [where(b), b] as const))('%s: bash -n, and its npx loadgen commands and flags exist', (_, b) => {
    const r = spawnSync('bash', ['-n'], { input: b.code, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(cliProblems(b.code)).toEqual([]);
  });

  // Identical blocks run once.
  const runnable = [...new Map(shellBlocks.filter((b) => !b.notRun && !b.runBy).map((b) => [b.code, b])).values()];
  it.each(runnable.map((b) => [where(b), b] as const))('%s: runs, every command exiting 0 or 1', (_, b) => {
    const dir = tempDir('loadgen-docs-run-');
    const env = { ...process.env, PATH: `${npxShim()}:${process.env.PATH}`, LOADGEN_PROGRESS_INTERVAL_MS: '60000' };
    // A command exiting 2 or more (bad input, a failed run) ends the block with its status.
    const script = `trap 'rc=$?; if [ $rc -ge 2 ]; then echo "exit $rc: $BASH_COMMAND" >&2; exit $rc; fi' ERR\n${b.code}\nexit 0\n`;
    const r = spawnSync('bash', ['-c', script], { cwd: dir, env, encoding: 'utf8', timeout: BLOCK_TIMEOUT_MS, killSignal: 'SIGKILL' });
    expect(r.status, `${where(b)}\n${r.stdout}\n${r.stderr}`).toBe(0);
    // What the block's comments say a command prints, it prints.
    const printed = r.stdout.split('\n').map((l) => l.trimEnd());
    for (const line of expectedOutput(b.code)) {
      const shown = line.endsWith('...') ? printed.some((p) => p.startsWith(line.slice(0, -3))) : printed.includes(line);
      expect(shown, `${where(b)}: the comment says the output has\n${line}\n--- it printed ---\n${r.stdout}`).toBe(true);
    }
  }, BLOCK_TIMEOUT_MS + 10_000);

  it('```ts blocks that import from loadgen compile under --strict; the others say why not', () => {
    const ts = blocks.filter((b) => b.lang === 'ts');
    const programs = ts.filter((b) => /^import [^;]* from 'loadgen';/m.test(b.code));
    const others = ts.filter((b) => !programs.includes(b) && !b.notRun && !b.runBy);
    expect(others.map(where), 'a ```ts block that is not a whole program needs <!-- not run: why -->').toEqual([]);
    const project = tempDir('loadgen-docs-ts-');
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(repoRoot, join(project, 'node_modules', 'loadgen'), 'dir');
    const files = programs.map((b) => {
      const file = `${b.file.replace(/[/.]/g, '_')}_${b.line}.mts`;
      writeFileSync(join(project, file), b.code);
      return file;
    });
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: true,
          typeRoots: [join(repoRoot, 'node_modules', '@types')], types: ['node'],
        },
        files,
      }),
    );
    const r = spawnSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8', timeout: 180_000 });
    // Name each block by its page and line in tsc's messages.
    const named = r.stdout.replace(/(\S+)_md_(\d+)\.mts/g, (_, f: string, line: string) => `${f.replace(/_/g, '/').replace(/^README$/, 'README.md')}.md:${line}`);
    expect(r.status, named).toBe(0);
    console.log(`${programs.length} TypeScript blocks compiled under --strict`);
  }, 200_000);

  it('```js blocks parse as ES modules', () => {
    for (const b of blocks.filter((x) => x.lang === 'js')) {
      const file = join(tempDir('loadgen-docs-js-'), 'block.mjs');
      writeFileSync(file, b.code);
      const r = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
      expect(r.status, `${where(b)}\n${r.stderr}`).toBe(0);
    }
  });

  it('```json blocks are JSON or JSON lines', () => {
    for (const b of blocks.filter((x) => x.lang === 'json')) {
      try {
        JSON.parse(b.code);
      } catch {
        for (const line of b.code.split('\n').filter((l) => l.trim())) expect(() => JSON.parse(line), `${where(b)}: ${line}`).not.toThrow();
      }
    }
  });
});

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

describe('links of README.md and docs/*.md', () => {
  it('every relative link names a file that exists, and an anchor one of its headings', () => {
    const prose = (file: string) => readFileSync(join(repoRoot, file), 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
    const anchors = (file: string) => new Set([...prose(file).matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1]!)));
    const broken: string[] = [];
    let checked = 0;
    for (const file of docFiles()) {
      for (const m of prose(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        checked++;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const resolved = path === '' ? join(repoRoot, file) : join(repoRoot, dirname(file), path);
        if (!existsSync(resolved)) broken.push(`${file}: ${target} (no ${relative(repoRoot, resolved)})`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(relative(repoRoot, resolved)).has(anchor)) broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });
});

describe('repository paths named in README.md and docs/*.md', () => {
  it('every `lib/…`, `native/…`, `bindings/…`, `test/…`, `scripts/…` or `benchmarks/…` path in backquotes exists (a move updates the docs)', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const file of docFiles()) {
      const text = readFileSync(join(repoRoot, file), 'utf8');
      for (const m of text.matchAll(/`((?:lib|native|bindings|test|scripts|benchmarks)\/[A-Za-z0-9_./-]+)`/g)) {
        const path = m[1]!.replace(/[.,]$/, '');
        if (/[*<>]/.test(path)) continue;
        checked++;
        if (!existsSync(join(repoRoot, path))) missing.push(`${file}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });
});

describe('.ci/run and the README', () => {
  it('.ci/run runs exactly the commands of the README\'s test block, in its order', () => {
    const ci = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8').split('\n');
    // The commands: lines that are neither comments, shell set-up, nor the package install's if/fi block.
    const commands: string[] = [];
    let depth = 0;
    for (const raw of ci) {
      const line = raw.trim();
      const oneLineIf = /^if\b.*;\s*fi$/.test(line);
      if (/^if\b/.test(line) && !oneLineIf) depth++;
      if (depth === 0 && !oneLineIf && line !== '' && !line.startsWith('#') && !/^(set |cd |packages=|sudo=)/.test(line)) commands.push(line);
      if (/^fi\b/.test(line)) depth--;
    }
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const block = /<!-- not run: [^>]*\.ci\/run runs exactly these[^>]*-->\n```sh\n([\s\S]*?)\n```/.exec(readme);
    expect(block, "README's test block").not.toBeNull();
    const readmeCommands = block![1]!.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter((l) => l !== '');
    expect(commands).toEqual(readmeCommands);
  });
});
