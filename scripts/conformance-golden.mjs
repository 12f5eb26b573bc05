#!/usr/bin/env node
// Part of `npm test`: the conformance runner over ../shared/golden, printing
// its failures and its closing "N passed, N failed" line. Skipped, saying
// so, where that folder is absent (e.g. in the published package).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const golden = resolve(root, '..', 'shared', 'golden');
if (!existsSync(join(golden, 'README.md'))) {
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
