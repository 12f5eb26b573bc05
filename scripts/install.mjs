#!/usr/bin/env node
// `npm install` step: use a prebuilt binary (prebuilds/<platform>-<arch>/) or an
// existing local build when one loads; otherwise build from source with
// cmake-js. `npm install --build-from-source` always builds.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

function loads() {
  try {
    require('node-gyp-build')(root);
    return true;
  } catch {
    return false;
  }
}

if (process.env.npm_config_build_from_source !== 'true' && loads()) process.exit(0);
const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-native.mjs')], { stdio: 'inherit' });
process.exit(r.status ?? 1);
