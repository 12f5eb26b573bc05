#!/usr/bin/env node
// Builds and runs the C++ core's own test binary (no Node headers involved).
// LOADGEN_SANITIZE=1 builds it with ASan/UBSan into a separate directory.
// The golden-driven tests read ../shared/golden beside the repository, or
// LOADGEN_GOLDEN_DIR; without it they fail, naming where they looked.
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const sanitize = process.env.LOADGEN_SANITIZE === '1';
const buildDir = join(root, 'build', sanitize ? 'native-tests-asan' : 'native-tests');
const hasNinja = spawnSync('ninja', ['--version']).status === 0;

run('cmake', [
  '-S', join(root, 'native'),
  '-B', buildDir,
  ...(hasNinja ? ['-G', 'Ninja'] : []),
  '-DLOADGEN_CORE_TESTS=ON',
  `-DLOADGEN_SANITIZE=${sanitize ? 'ON' : 'OFF'}`,
  `-DCMAKE_BUILD_TYPE=${sanitize ? 'Debug' : 'Release'}`,
]);
run('cmake', ['--build', buildDir, '--parallel', '2']);
const exe = join(buildDir, process.platform === 'win32' ? 'Release/loadgen_core_tests.exe' : 'loadgen_core_tests');
run(exe, process.argv.slice(2), { cwd: root });

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) {
    console.error(`failed to run ${cmd}: ${r.error.message}`);
    process.exit(1);
  }
  if (r.status !== 0) process.exit(r.status ?? 1);
}
