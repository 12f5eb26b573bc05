#!/usr/bin/env node
// Builds and runs the C++ core's own test binary (no Node headers involved).
// LOADGEN_SANITIZE=1 (or =address) builds it with ASan/UBSan, LOADGEN_SANITIZE=thread
// with ThreadSanitizer, each into its own directory; a sanitizer report fails the run.
// LOADGEN_PORTABLE=1 builds the core with the generic waits and sleeps macOS uses
// (native/platform.h, LOADGEN_FORCE_PORTABLE), into build/native-tests-portable.
// The golden-driven tests read ../shared/golden beside the repository, or
// LOADGEN_GOLDEN_DIR; without it they fail, naming where they looked.
//
// TSan's shadow memory layout (LLVM 14, GCC 12) does not fit the 32 random mmap
// bits of some newer kernels ("FATAL: ThreadSanitizer: unexpected memory mapping");
// when a first run that selects no test fails so, the tests run under
// `setarch <arch> -R` (no address randomisation, for that process only).
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const mode = sanitizerMode(process.env.LOADGEN_SANITIZE);
const portable = process.env.LOADGEN_PORTABLE === '1';
const buildDir = join(root, 'build', { none: 'native-tests', address: 'native-tests-asan', thread: 'native-tests-tsan' }[mode] + (portable ? '-portable' : ''));
const hasNinja = spawnSync('ninja', ['--version']).status === 0;
// TSan at -O0 is too slow for the timed tests; -O2 -g keeps stacks readable.
const buildType = { none: 'Release', address: 'Debug', thread: 'RelWithDebInfo' }[mode];

run('cmake', [
  '-S', join(root, 'native'),
  '-B', buildDir,
  ...(hasNinja ? ['-G', 'Ninja'] : []),
  '-DLOADGEN_CORE_TESTS=ON',
  `-DLOADGEN_SANITIZE=${mode === 'address' ? 'ON' : 'OFF'}`,
  `-DLOADGEN_SANITIZE_THREAD=${mode === 'thread' ? 'ON' : 'OFF'}`,
  `-DLOADGEN_FORCE_PORTABLE=${portable ? 'ON' : 'OFF'}`,
  `-DCMAKE_BUILD_TYPE=${buildType}`,
]);
// --config: Visual Studio's generator (Windows) builds every configuration in one tree.
run('cmake', ['--build', buildDir, '--parallel', '2', '--config', buildType]);
const exe = join(buildDir, process.platform === 'win32' && !hasNinja ? `${buildType}/loadgen_core_tests.exe` : 'loadgen_core_tests');
const env = { ...process.env };
if (mode === 'address') {
  // UBSan only prints by default; a finding must fail the run.
  env.UBSAN_OPTIONS ??= 'halt_on_error=1:print_stacktrace=1';
}
if (mode === 'thread') {
  env.TSAN_OPTIONS ??= `halt_on_error=1:second_deadlock_stack=1:suppressions=${join(root, 'native', 'tsan.supp')}`;
  // Tests that need a run to be fast give it this many times longer (test_util.h).
  env.LOADGEN_TEST_TIME_FACTOR ??= '10';
}
if (mode === 'thread' && process.platform === 'linux' && tsanNeedsFixedLayout()) {
  console.log('test-native: TSan cannot map its shadow memory with this kernel\'s ASLR; running under setarch -R');
  run('setarch', [archName(), '-R', exe, ...process.argv.slice(2)], { cwd: root, env });
} else {
  run(exe, process.argv.slice(2), { cwd: root, env });
}

/** Whether the TSan binary dies at start-up on this kernel's address layout. */
function tsanNeedsFixedLayout() {
  const probe = spawnSync(exe, ['--no-test-has-this-name--'], { cwd: root, env, encoding: 'utf8' });
  return probe.status !== 0 && /unexpected memory mapping/.test(`${probe.stderr}${probe.stdout}`);
}

function sanitizerMode(value) {
  if (value === undefined || value === '' || value === '0') return 'none';
  if (value === '1' || value === 'address') return 'address';
  if (value === 'thread') return 'thread';
  console.error(`LOADGEN_SANITIZE=${JSON.stringify(value)}: expected 1 (or address) for ASan/UBSan, thread for TSan, or unset`);
  process.exit(2);
}

function archName() {
  const r = spawnSync('uname', ['-m'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : 'x86_64';
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) {
    console.error(`failed to run ${cmd}: ${r.error.message}`);
    process.exit(1);
  }
  if (r.status !== 0) process.exit(r.status ?? 1);
}
