#!/usr/bin/env node
// Runs a subset of the vitest suite against the addon built with
// AddressSanitizer/UndefinedBehaviorSanitizer (Debug, node-addon-api type checks
// on): `node scripts/build-native.mjs --sanitize` into build/addon-asan/, then
// vitest with
//   LOADGEN_ADDON_PATH  the sanitized addon (lib/native/loader.ts; test-only),
//   LD_PRELOAD          the ASan runtime: Node itself is not instrumented, and
//                       ASan must be the first library loaded,
//   ASAN_OPTIONS        detect_leaks=0: Node does not free everything at exit,
//   UBSAN_OPTIONS       halt_on_error=1: UBSan only prints by default.
// Every Node process of the run (vitest's forks, the CLI children) inherits them.
// A sanitizer report ends its process with an error, which fails the test.
//
//   node scripts/test-sanitized-addon.mjs            build, check, run the subset
//   node scripts/test-sanitized-addon.mjs --no-build reuse build/addon-asan
//   node scripts/test-sanitized-addon.mjs test/x.test.ts ...   other test files
// Linux only (LD_PRELOAD); needs dist/ (npm run build:ts) for the load check.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

// The suites that cross the bindings: completions (every form), drains,
// every dispatch mode with worker threads, issue threads, the native surface,
// settings and config through the core, tokens, errors thrown by C++.
const subset = [
  'test/completion.test.ts',
  'test/drain.test.ts',
  'test/dispatch.test.ts',
  'test/worker.test.ts',
  'test/issue-threads.test.ts',
  'test/native-surface.test.ts',
  'test/native-tables.test.ts',
  'test/settings-io.test.ts',
  'test/config.test.ts',
  'test/tokens.test.ts',
  'test/errors.test.ts',
  'test/scenarios.test.ts',
  // issue 11's reliability suites: stale ids across runs, interrupts, hangs
  'test/stale-ids.test.ts',
  'test/interrupt.test.ts',
  'test/hangs.test.ts',
  // issue 12: failed samples and completion stamps (from workers too)
  'test/failures.test.ts',
  // the native HTTP transport through its binding (NativeHttpSut, the threadsafe function, the type tag)
  'test/net-native.test.ts',
  'test/net-failures.test.ts',
];

if (process.platform !== 'linux') {
  console.error('test-sanitized-addon: Linux only (it preloads the ASan runtime with LD_PRELOAD)');
  process.exit(2);
}
const args = process.argv.slice(2);
const build = !args.includes('--no-build');
const files = args.filter((a) => a !== '--no-build');
const addon = join(root, 'build', 'addon-asan', 'Debug', 'loadgen.node');

if (build) run(process.execPath, [join(root, 'scripts', 'build-native.mjs'), '--sanitize']);
if (!existsSync(addon)) fail(`${addon} is missing: run without --no-build`);

const env = {
  ...process.env,
  LOADGEN_ADDON_PATH: addon,
  LD_PRELOAD: asanRuntime(addon),
  ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=1',
  UBSAN_OPTIONS: 'halt_on_error=1:abort_on_error=1:print_stacktrace=1',
};

// The tests must exercise this addon, not build/Release: check what a process maps.
if (!existsSync(join(root, 'dist', 'native', 'index.js'))) fail('dist/ is missing: run `npm run build:ts` first');
const check = spawnSync(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    "const m = await import('./dist/native/index.js'); m.loadNative();" +
      "const maps = (await import('node:fs')).readFileSync('/proc/self/maps', 'utf8');" +
      "console.log(maps.includes(process.env.LOADGEN_ADDON_PATH) && /libasan/.test(maps) ? 'ok' : 'wrong addon');",
  ],
  { cwd: root, env, encoding: 'utf8' },
);
if (check.stdout.trim() !== 'ok') {
  fail(`the sanitized addon did not load (${check.stdout.trim()}): ${check.stderr.trim().split('\n').slice(0, 5).join(' | ')}`);
}
console.log(`test-sanitized-addon: ${addon} with ${env.LD_PRELOAD}`);

const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
run(process.execPath, [vitest, 'run', ...(files.length ? files : subset)], { env });

/** The ASan runtime the addon links (GCC: libasan.so.N), for LD_PRELOAD. */
function asanRuntime(file) {
  const r = spawnSync('ldd', [file], { encoding: 'utf8' });
  const lib = /^\s*(libasan\.so[.\d]*|libclang_rt\.asan[^ ]*\.so)\s+=>\s+(\S+)/m.exec(r.stdout ?? '');
  if (!lib) fail(`${file} does not link a shared ASan runtime (ldd: ${(r.stdout || r.stderr || '').trim()})`);
  return lib[2];
}

function run(cmd, argv, opts = {}) {
  const r = spawnSync(cmd, argv, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error) fail(`failed to run ${cmd}: ${r.error.message}`);
  if (r.status !== 0) process.exit(r.status ?? 1);
}

function fail(why) {
  console.error(`test-sanitized-addon: ${why}`);
  process.exit(1);
}
