#!/usr/bin/env node
// `npm run prebuild:collect -- <artifacts-dir>` (the release job of
// .github/workflows/prebuild.yml, before `npm publish`): copies every
// <platform>-<arch>/<name>.node found under <artifacts-dir> (the downloaded
// CI artifacts, one folder each) into prebuilds/, then checks that every
// platform the package promises has its binary and that each file is a binary
// for the platform its folder names (ELF/Mach-O/PE header and CPU), so a
// mislabelled or missing artifact stops the release. Exit 0 all there, 1 not.
//
// Without <artifacts-dir> it only checks prebuilds/. --out <dir> writes (and
// checks) another folder instead of prebuilds/ (tests).
import { copyFileSync, existsSync, mkdirSync, openSync, readdirSync, readSync, closeSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The prebuilds the published package holds (docs/platforms-and-building.md's platform table). */
const EXPECTED = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'];
const FILE = 'loadgen.napi.node';

const args = process.argv.slice(2);
let out = join(root, 'prebuilds');
let source;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--out') out = resolve(args[++i] ?? fail('--out needs a directory'));
  else if (args[i].startsWith('-')) fail(`unknown option ${args[i]} (expected [<artifacts-dir>] [--out <dir>])`);
  else if (source === undefined) source = resolve(args[i]);
  else fail(`one artifacts directory only (got ${source} and ${args[i]})`);
}

if (source !== undefined) {
  if (!existsSync(source) || !statSync(source).isDirectory()) fail(`artifacts directory ${source} does not exist`);
  const found = findBinaries(source);
  if (found.length === 0) fail(`no <platform>-<arch>/*.node files under ${source}`);
  for (const file of found) {
    const target = join(out, basename(dirname(file)), basename(file));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(file, target);
    console.log(`prebuild:collect: ${relative(source, file)} -> ${relative(process.cwd(), target) || target}`);
  }
}

const problems = [];
for (const platform of EXPECTED) {
  const file = join(out, platform, FILE);
  if (!existsSync(file)) {
    problems.push(`${platform}: missing ${file}`);
    continue;
  }
  const actual = binaryPlatform(file);
  if (actual !== platform) problems.push(`${platform}: ${file} is ${actual ? `a ${actual} binary` : 'not a shared library'}`);
}
if (problems.length) {
  console.error(`prebuild:collect: ${problems.length} of ${EXPECTED.length} platforms not ready:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`prebuild:collect: all ${EXPECTED.length} prebuilds present and of the right kind (${EXPECTED.join(', ')})`);

function findBinaries(dir) {
  const result = [];
  for (const entry of readdirSync(dir, { recursive: true }).map(String)) {
    const parts = entry.split(/[/\\]/);
    if (parts.length >= 2 && parts.at(-1).endsWith('.node') && EXPECTED.includes(parts.at(-2))) result.push(join(dir, entry));
  }
  return result;
}

/** '<platform>-<arch>' a binary is for, from its header; undefined when unknown. */
function binaryPlatform(file) {
  const fd = openSync(file, 'r');
  const head = Buffer.alloc(4096);
  const n = readSync(fd, head, 0, head.length, 0);
  closeSync(fd);
  if (n >= 20 && head.readUInt32BE(0) === 0x7f454c46) {
    // ELF: e_machine at 18 (little-endian on both targets).
    return { 62: 'linux-x64', 183: 'linux-arm64' }[head.readUInt16LE(18)];
  }
  if (n >= 8 && head.readUInt32LE(0) === 0xfeedfacf) {
    // Mach-O 64: cputype at 4.
    return { 0x01000007: 'darwin-x64', 0x0100000c: 'darwin-arm64' }[head.readUInt32LE(4)];
  }
  if (n >= 64 && head.toString('latin1', 0, 2) === 'MZ') {
    const pe = head.readUInt32LE(60);
    if (pe + 6 <= n && head.toString('latin1', pe, pe + 4) === 'PE\0\0') {
      return { 0x8664: 'win32-x64', 0xaa64: 'win32-arm64' }[head.readUInt16LE(pe + 4)];
    }
  }
  return undefined;
}

function fail(why) {
  console.error(`prebuild:collect: ${why}`);
  process.exit(1);
}
