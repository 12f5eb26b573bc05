#!/usr/bin/env node
// `npm run prebuild:arm64` (Linux x64, Debian/Ubuntu): cross-compiles the addon
// for linux-arm64 with Debian's g++-aarch64-linux-gnu through cmake-js and
// cmake/aarch64-linux-gnu.cmake into prebuilds/linux-arm64/loadgen.napi.node
// (stripped, as prebuildify does), and the core's C++ test binary into
// build/native-tests-arm64/ for scripts/test-arm64.mjs. Installs the cross
// compiler and qemu-user (for the test) from Debian packages when missing.
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ensureDebianTools, fail, onPath, run } from './debian-tools.mjs';

const who = 'prebuild:arm64';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const toolchain = join(root, 'cmake', 'aarch64-linux-gnu.cmake');
const started = Date.now();

if (process.platform !== 'linux') fail(who, `cross-compiling for linux-arm64 needs a Linux host (this is ${process.platform})`);
ensureDebianTools(
  [
    ['aarch64-linux-gnu-g++', 'g++-aarch64-linux-gnu'],
    ['qemu-aarch64', 'qemu-user'],
    ['cmake', 'cmake'],
  ],
  who,
);

// The addon: cmake-js's own build tree for the target, then the stripped copy.
const addonBuild = join(root, 'build', 'linux-arm64');
const cmakeJs = require.resolve('cmake-js/bin/cmake-js');
run(who, process.execPath, [
  cmakeJs, 'compile', '--directory', root, '--out', addonBuild, '--config', 'Release', '--arch', 'arm64',
  `--CDCMAKE_TOOLCHAIN_FILE=${toolchain}`, '--CDCMAKE_BUILD_TYPE=Release', '--CDLOADGEN_ADDON_TYPE_CHECKS=OFF',
], { cwd: root });
const outDir = join(root, 'prebuilds', 'linux-arm64');
mkdirSync(outDir, { recursive: true });
const prebuild = join(outDir, 'loadgen.napi.node');
copyFileSync(join(addonBuild, 'Release', 'loadgen.node'), prebuild);
run(who, 'aarch64-linux-gnu-strip', ['--strip-all', prebuild]);

// The core's C++ tests, for the qemu run.
const testsBuild = join(root, 'build', 'native-tests-arm64');
run(who, 'cmake', [
  '-S', join(root, 'native'), '-B', testsBuild, ...(onPath('ninja') ? ['-G', 'Ninja'] : []),
  `-DCMAKE_TOOLCHAIN_FILE=${toolchain}`, '-DLOADGEN_CORE_TESTS=ON', '-DCMAKE_BUILD_TYPE=Release',
]);
run(who, 'cmake', ['--build', testsBuild, '--parallel', '2']);

console.error(`${who}: wrote prebuilds/linux-arm64/loadgen.napi.node and build/native-tests-arm64/loadgen_core_tests ` +
  `(${((Date.now() - started) / 1000).toFixed(0)} s); test them with npm run test:arm64`);
