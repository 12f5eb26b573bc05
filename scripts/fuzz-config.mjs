#!/usr/bin/env node
// Builds the libFuzzer target native/fuzz/fuzz_config.cc (the config parser
// and the settings derivation, with ASan/UBSan) with clang++ into build/fuzz/
// and runs it for a bounded time from the checked-in seeds
// (native/fuzz/corpus/, read only; what the fuzzer finds goes to
// build/fuzz/corpus/). A crash, sanitizer report, timeout or out-of-memory
// fails the run and leaves the input in build/fuzz/artifacts/; rerun it with
//   build/fuzz/fuzz_config build/fuzz/artifacts/<file>
//
//   node scripts/fuzz-config.mjs [seconds]    default 60 (LOADGEN_FUZZ_SECONDS)
// Needs clang++ and libFuzzer (Debian: apt-get install clang libclang-rt-14-dev).
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const seconds = Number(process.argv[2] ?? process.env.LOADGEN_FUZZ_SECONDS ?? 60);
if (!Number.isInteger(seconds) || seconds < 1) {
  console.error(`fuzz-config: the time must be a whole number of seconds >= 1, got ${JSON.stringify(process.argv[2])}`);
  process.exit(2);
}
const clang = process.env.LOADGEN_FUZZ_CXX ?? 'clang++';
if (spawnSync(clang, ['--version']).status !== 0) {
  console.error(`fuzz-config: ${clang} not found (Debian: apt-get install clang libclang-rt-14-dev)`);
  process.exit(1);
}

const buildDir = join(root, 'build', 'fuzz');
const hasNinja = spawnSync('ninja', ['--version']).status === 0;
run('cmake', [
  '-S', join(root, 'native'),
  '-B', buildDir,
  ...(hasNinja ? ['-G', 'Ninja'] : []),
  `-DCMAKE_CXX_COMPILER=${clang}`,
  '-DCMAKE_BUILD_TYPE=RelWithDebInfo',
  '-DLOADGEN_CORE_TESTS=OFF',
  '-DLOADGEN_FUZZ=ON',
]);
run('cmake', ['--build', buildDir, '--parallel', '2', '--target', 'fuzz_config']);

const corpus = join(buildDir, 'corpus');
const artifacts = join(buildDir, 'artifacts');
mkdirSync(corpus, { recursive: true });
mkdirSync(artifacts, { recursive: true });
const fuzzDir = join(root, 'native', 'fuzz');
run(join(buildDir, 'fuzz_config'), [
  `-max_total_time=${seconds}`,
  '-timeout=10', // seconds per input: a parse that long is a hang
  '-rss_limit_mb=2048',
  '-max_len=8192',
  `-dict=${join(fuzzDir, 'config.dict')}`,
  `-artifact_prefix=${artifacts}/`,
  '-print_final_stats=1',
  corpus,
  join(fuzzDir, 'corpus'),
], {
  env: {
    ...process.env,
    ASAN_OPTIONS: process.env.ASAN_OPTIONS ?? 'detect_leaks=1',
    UBSAN_OPTIONS: process.env.UBSAN_OPTIONS ?? 'halt_on_error=1:print_stacktrace=1',
  },
});
console.log(`fuzz-config: no crash in ${seconds} s`);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.error) {
    console.error(`fuzz-config: failed to run ${cmd}: ${r.error.message}`);
    process.exit(1);
  }
  if (r.status !== 0) {
    console.error(`fuzz-config: ${cmd} exited with status ${r.status ?? r.signal}`);
    process.exit(r.status ?? 1);
  }
}
