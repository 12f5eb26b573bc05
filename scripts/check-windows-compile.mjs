#!/usr/bin/env node
// Development check (not part of npm test): the Windows branches of native/
// (platform.h, wait.cc: WaitOnAddress, SetThreadAffinityMask, the waitable
// timer), the core's tests and bindings/ compile for x86_64 Windows, with
// Debian's MinGW-w64 g++ (g++-mingw-w64-x86-64-posix) and -fsyntax-only. It
// cannot catch what only MSVC rejects; the CI matrix's windows job builds with
// MSVC (.github/workflows/prebuild.yml).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ensureDebianTools } from './debian-tools.mjs';

const who = 'check-windows-compile';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const cxx = 'x86_64-w64-mingw32-g++-posix';
ensureDebianTools([[cxx, 'g++-mingw-w64-x86-64-posix']], who);

const napiHeaders = require('node-api-headers').include_dir;
const addonApi = require('node-addon-api').include_dir;
const sources = [
  ...['native', 'native/test', 'bindings'].flatMap((dir) =>
    readdirSync(join(root, dir)).filter((f) => f.endsWith('.cc')).map((f) => join(dir, f))),
];
const common = ['-std=c++17', '-fsyntax-only', '-Wall', '-Wextra', '-Wno-unused-parameter', '-D_WIN32_WINNT=0x0A00',
  '-DNAPI_VERSION=8', '-DNAPI_CPP_EXCEPTIONS', '-DNODE_ADDON_API_DISABLE_DEPRECATED', '-DNODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS',
  '-DLOADGEN_DEFAULT_GOLDEN_DIR="golden"', `-I${join(root, 'native')}`, `-I${root}`, `-I${napiHeaders}`, `-I${addonApi}`];
let failed = 0;
for (const file of sources) {
  const r = spawnSync(cxx, [...common, join(root, file)], { encoding: 'utf8' });
  if (r.status !== 0) {
    failed++;
    console.log(`FAIL ${file}\n${r.stderr.trim().split('\n').slice(0, 20).join('\n')}`);
  } else if (r.stderr.trim()) {
    console.log(`warn ${file}\n${r.stderr.trim().split('\n').slice(0, 10).join('\n')}`);
  }
}
console.log(`${who}: ${sources.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
