#!/usr/bin/env node
// Builds the addon from source with cmake-js into build/Release (which
// node-gyp-build prefers over prebuilds/). `npm run build:native` in a clone;
// at `npm install` time scripts/install.mjs calls it only when no prebuilt
// binary loads. Extra arguments go to `cmake-js compile`.
//
// --sanitize (tests only): a Debug build with AddressSanitizer/UndefinedBehaviorSanitizer
// and node-addon-api's type checks into build/addon-asan/, which nothing loads unless
// LOADGEN_ADDON_PATH names it (scripts/test-sanitized-addon.mjs does).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

let cmakeJs;
try {
  cmakeJs = require.resolve('cmake-js/bin/cmake-js');
} catch {
  fail('the cmake-js package is not installed (it is a dependency of loadgen: reinstall loadgen).');
}

const missing = missingTools();
if (missing.length) fail(`${missing.join(' and ')} not found on PATH.`);

const sanitize = process.argv.includes('--sanitize');
const extra = process.argv.slice(2).filter((arg) => arg !== '--sanitize');
if (sanitize) {
  extra.unshift('--out', join(root, 'build', 'addon-asan'), '--config', 'Debug',
    '--CDLOADGEN_SANITIZE=ON', '--CDLOADGEN_ADDON_TYPE_CHECKS=ON');
}
const result = spawnSync(process.execPath, [cmakeJs, 'compile', '--directory', root, ...extra], {
  cwd: root,
  stdio: 'inherit',
});
if (result.error) fail(String(result.error));
if (result.status !== 0) fail(`cmake-js exited with status ${result.status}.`);

/** The build tools this platform needs that are not on PATH (best effort). */
function missingTools() {
  const missing = [];
  if (!process.env.npm_config_cmake_path && !onPath('cmake')) missing.push('cmake');
  // Windows: cmake-js finds Visual Studio itself; macOS/Linux: a C++ compiler on PATH.
  if (process.platform !== 'win32') {
    const cxx = process.env.CXX ? [process.env.CXX.split(' ')[0]] : ['c++', 'g++', 'clang++'];
    if (!cxx.some(onPath)) missing.push(`a C++ compiler (${cxx.join(', ')})`);
  }
  return missing;
}

function onPath(cmd) {
  if (cmd.includes('/') || cmd.includes('\\')) return existsSync(cmd);
  const exts = process.platform === 'win32' ? (process.env.PATHEXT ?? '.EXE').split(';') : [''];
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => exts.some((ext) => existsSync(join(dir, cmd + ext))));
}

function fail(why) {
  const context = process.env.LOADGEN_BUILD_REASON
    ? `loadgen needs to build its native addon from source because ${process.env.LOADGEN_BUILD_REASON},`
    : 'loadgen: building the native addon from source';
  const installHint = {
    linux:
      '  Debian/Ubuntu:  sudo apt-get install cmake g++        (ninja-build optional)\n' +
      '  Fedora/RHEL:    sudo dnf install cmake gcc-c++\n' +
      '  Alpine:         apk add cmake make g++ linux-headers\n',
    darwin: '  macOS:          xcode-select --install && brew install cmake\n',
    win32: '  Windows:        Visual Studio 2019+ ("Desktop development with C++", includes CMake)\n',
  }[process.platform] ?? '  CMake >= 3.15 and a C++17 compiler from your system\'s package manager\n';
  console.error(
    `\n${context} and that failed: ${why}\n\n` +
      `Platform: ${process.platform}-${process.arch}, Node ${process.versions.node} (N-API ${process.versions.napi}).\n` +
      'Building needs CMake >= 3.15 and a C++17 compiler. Install them with:\n' +
      installHint +
      'then run `npm rebuild loadgen` (in a clone of the repository: `npm run build:native`).\n',
  );
  process.exit(1);
}
