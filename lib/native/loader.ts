/**
 * Loads the native addon, once per environment, and explains a failure.
 * Prebuilt binaries in prebuilds/<platform>-<arch>/ are tried first, then a
 * local build in build/Release (node-gyp-build's order).
 *
 * Test-only: LOADGEN_ADDON_PATH names an addon file to load instead (the
 * ASan/UBSan build of scripts/test-sanitized-addon.mjs); unset, nothing changes.
 */
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { BusyError, NativeLoadError, NotRunningError, SettingsError } from '../errors.js';
import type { NativeAddon } from './addon.js';
import type { NativeInternals } from './internals.js';

/** The module as node-gyp-build returns it: the production surface, and the test-only one apart. */
type NativeModule = NativeAddon & { readonly _internals: NativeInternals };

/** The package root (two levels above lib/native/ or dist/native/). */
export const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

let loaded: NativeModule | undefined;
let loadedFile: string | undefined;

function loadModule(): NativeModule {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  try {
    const override = addonPathOverride();
    const nodeGypBuild = require('node-gyp-build') as { path(dir: string): string };
    const file = override ?? nodeGypBuild.path(packageRoot);
    const addon = require(file) as NativeModule;
    loadedFile = file;
    // The addon throws these classes, with their codes, in this environment.
    addon.setErrorClasses({ BusyError, NotRunningError, SettingsError });
    loaded = addon;
  } catch (cause) {
    throw new NativeLoadError(describeLoadFailure(cause), cause);
  }
  return loaded;
}

/** Loads the addon once per environment; throws NativeLoadError with what to do. */
export function loadNative(): NativeAddon {
  return loadModule();
}

/**
 * Not public API. The addon's test-only surface (internals.ts): the core's
 * pure functions, the platform probes and test counters, for `loadgen trace`,
 * `loadgen settings`, `loadgen bench`, the conformance runner and tests. It
 * changes with the core, without notice.
 */
export function loadNativeInternals(): NativeInternals {
  return loadModule()._internals;
}

/** The file the addon was loaded from (absolute); undefined before loadNative(). */
export function loadedAddonFile(): string | undefined {
  return loadedFile;
}

/** LOADGEN_ADDON_PATH (tests only), absolute; undefined when unset. */
function addonPathOverride(): string | undefined {
  const path = process.env.LOADGEN_ADDON_PATH;
  return path ? resolve(path) : undefined;
}

function libcName(): string {
  if (process.platform !== 'linux') return 'n/a';
  const report = process.report?.getReport?.() as { header?: { glibcVersionRuntime?: string } } | undefined;
  const glibc = report?.header?.glibcVersionRuntime;
  return glibc ? `glibc ${glibc}` : 'musl (or unknown)';
}

function describeLoadFailure(cause: unknown): string {
  const why = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
  return [
    `loadgen: could not load the native addon for ${process.platform}-${process.arch} ` +
      `(libc: ${libcName()}, Node ${process.versions.node}, N-API ${process.versions.napi}).`,
    addonPathOverride()
      ? `Tried: ${addonPathOverride()} (LOADGEN_ADDON_PATH).`
      : `Tried: ${resolve(packageRoot, 'prebuilds', `${process.platform}-${process.arch}`)} and ${resolve(packageRoot, 'build', 'Release')}.`,
    `Reason: ${why}`,
    'To build it from source you need CMake >= 3.15 and a C++17 compiler; then run `npm rebuild loadgen`',
    '(in a clone of the repository: `npm run build:native`).',
  ].join('\n');
}
