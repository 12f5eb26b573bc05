#!/usr/bin/env node
// Builds the addon from source with cmake-js. Called by `npm install` (through
// node-gyp-build) only when no prebuilt binary matches this platform.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

let cmakeJs;
try {
  cmakeJs = require.resolve('cmake-js/bin/cmake-js');
} catch {
  fail('cmake-js is not installed.');
}

const extra = process.argv.slice(2);
const result = spawnSync(process.execPath, [cmakeJs, 'compile', '--directory', root, ...extra], {
  cwd: root,
  stdio: 'inherit',
});
if (result.error) fail(String(result.error));
if (result.status !== 0) fail(`cmake-js exited with status ${result.status}.`);

function fail(why) {
  console.error(
    `\nloadgen: no prebuilt binary matches ${process.platform}-${process.arch} ` +
      `(Node ${process.versions.node}, N-API ${process.versions.napi}), and building from source failed: ${why}\n` +
      'To build from source you need CMake >= 3.15 and a C++17 compiler:\n' +
      '  Debian/Ubuntu: apt-get install cmake g++ (ninja-build optional)\n' +
      '  macOS:         xcode-select --install && brew install cmake\n' +
      '  Windows:       Visual Studio 2019+ with "Desktop development with C++" and CMake\n' +
      'then run `npm rebuild loadgen`.\n',
  );
  process.exit(1);
}
