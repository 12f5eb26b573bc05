#!/usr/bin/env node
// Part of `npm test`: the conformance runner over ../shared/golden (or
// LOADGEN_GOLDEN_DIR), printing its failures and its closing "N passed,
// N failed" line. Without that folder it fails in a git checkout, where the
// vectors belong beside the repository, and is skipped, saying so, elsewhere
// (e.g. in the published package).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const golden = process.env.LOADGEN_GOLDEN_DIR ? resolve(process.env.LOADGEN_GOLDEN_DIR) : resolve(root, '..', 'shared', 'golden');
if (!existsSync(join(golden, 'README.md'))) {
  if (existsSync(join(root, '.git'))) {
    console.error(`conformance: FAILED, no reference vectors at ${golden} (a git checkout needs them beside the repository; LOADGEN_GOLDEN_DIR names another folder)`);
    process.exit(1);
  }
  console.log(`conformance: skipped, no reference vectors at ${golden}`);
  process.exit(0);
}
const r = spawnSync(process.execPath, [join(root, 'dist', 'conformance', 'cli.js'), golden], {
  cwd: root,
  encoding: 'utf8',
  maxBuffer: 1 << 28,
});
const lines = (r.stdout ?? '').trimEnd().split('\n');
for (const line of lines.slice(0, -1)) if (!line.startsWith('PASS ')) console.log(line);
if (r.stderr) process.stderr.write(r.stderr);
console.log(`conformance (${golden}): ${lines[lines.length - 1]}`);
process.exit(r.status ?? 1);
