#!/usr/bin/env node
// `npm install` step. Uses the prebuilt binary (prebuilds/<platform>-<arch>/
// loadgen.napi.node, N-API: one file for every Node >= 20) or an existing local
// build when one loads; builds from source with cmake-js (scripts/
// build-native.mjs) only when none does. `npm install --build-from-source`
// (npm_config_build_from_source) always builds, and so does `npm install`/
// `npm ci` in a git checkout of the repository. Either way it says what it did
// in one line on stderr (npm shows it with --foreground-scripts, or when a
// build fails).
//
// Nothing at run time depends on this script having run: lib/native/loader.ts loads
// the same binary through node-gyp-build, and says what to do when none loads.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

const fromSource = ['true', '1'].includes(process.env.npm_config_build_from_source ?? '');

// In a clone of the repository (`npm ci` there) the sources may be newer than
// any binary lying around: build (incrementally, in the same build tree).
const clone = existsSync(join(root, '.git'));

let reason;
if (fromSource) {
  reason = 'a build from source was requested (npm_config_build_from_source)';
} else if (clone) {
  reason = 'this is a git checkout';
} else {
  const found = tryLoad();
  if (found.ok) {
    console.error(`loadgen: using the ${found.kind} ${found.file} (${target()}); nothing to build.`);
    process.exit(0);
  }
  reason = found.reason;
}

console.error(`loadgen: ${reason}; building the native addon from source.`);
const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-native.mjs')], {
  stdio: 'inherit',
  env: { ...process.env, LOADGEN_BUILD_REASON: reason },
});
process.exit(r.status ?? 1);

function tryLoad() {
  let file;
  try {
    file = require('node-gyp-build').path(root);
  } catch {
    return { ok: false, reason: `this package has no prebuilt binary for ${target()}` };
  }
  try {
    require(file);
    const rel = relative(root, file);
    return { ok: true, file: rel, kind: rel.startsWith('prebuilds') ? 'prebuilt binary' : 'local build' };
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    return { ok: false, reason: `${relative(root, file)} does not load here (${why})` };
  }
}

/** e.g. "linux-x64, glibc 2.36" (what node-gyp-build matches prebuilds against). */
function target() {
  let libc = '';
  if (process.platform === 'linux') {
    const glibc = process.report?.getReport?.().header?.glibcVersionRuntime;
    libc = glibc ? `, glibc ${glibc}` : ', musl';
  }
  return `${process.platform}-${process.arch}${libc}`;
}
