// What logging sampled responses costs a fast SUT (issue 23 item 15). Two measurements, every
// run in a fresh process, medians over the rounds:
//
// TEST01 (default): SingleStream, a JS SUT that completes each query with a 4-byte response
// after a ~100 µs busy wait, a base run against a TEST01-like run (the reference's TEST01
// audit.config: PerformanceOnly, its accuracy_log_rng_seed, and an accuracy_log_sampling_target
// that logs ~4,096 responses), base and TEST01 alternating. In the TEST01 runs the SUT also
// times its querySamplesComplete call (the completion, the hand-over of the next query and, for
// a sampled response, logging it).
//
// --calls: the two call paths side by side. SingleStream, the same SUT with a shorter busy wait
// (default 20 µs) and accuracy_log_probability 0.5, so sampled and unsampled completions
// interleave at random in one run; every querySamplesComplete call is timed, the clock's own
// cost (an empty interval's median) taken off: median ns per call of each kind.
//
//   npm run build:native && npm run build:ts
//   node benchmarks/test01-logging.mjs [rounds=5] [durationMs=5000] [busyUs=100]
//   node benchmarks/test01-logging.mjs --calls [rounds=5] [durationMs=2000] [busyUs=20] [bytes=4]
//
// Options, before the other arguments:
//   --compare <dir>  also runs the build in <dir> (a package root with its dist/ and
//                    build/Release/, e.g. an older commit's), round by round alternating with this
//                    one, and reports both: the before/after of benchmarks/RESULTS.md.
//   --fresh          the SUT responds with a new Uint8Array each time (V8 keeps one of up to 64
//                    bytes inside its heap) instead of the same one every time.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const self = fileURLToPath(import.meta.url);
const thisRoot = fileURLToPath(new URL('..', import.meta.url));
// The reference's TEST01 seed (compliance/nvidia/TEST01/audit.config).
const TEST01_SEED = '720381539243781796';
const LOGGED = 4096;
let responses = 'same';  // or 'fresh' (--fresh)

const args = process.argv.slice(2);
if (args[0] === '--child') {
  const [, root, kind, durationMs, busyUs, bytes, fresh] = args;
  await child(root, kind, Number(durationMs), Number(busyUs), Number(bytes), fresh === 'fresh');
} else {
  let compare;
  let fresh = false;
  for (;;) {
    if (args[0] === '--compare') {
      compare = resolve(args[1]);
      args.splice(0, 2);
    } else if (args[0] === '--fresh') {
      fresh = true;
      args.shift();
    } else {
      break;
    }
  }
  responses = fresh ? 'fresh' : 'same';
  const calls = args[0] === '--calls';
  if (calls) args.shift();
  const num = (i, fallback) => Number(args[i] ?? fallback);
  const builds = compare ? { after: thisRoot, before: compare } : { after: thisRoot };
  if (calls) callsParent(builds, num(0, 5), num(1, 2000), num(2, 20), num(3, 4));
  else test01Parent(builds, num(0, 5), num(1, 5000), num(2, 100));
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

// One run in a fresh process; its figures (the child's last line).
function runChild(build, root, kind, durationMs, busyUs, bytes, round) {
  const r = spawnSync(process.execPath, [self, '--child', root, kind, String(durationMs), String(busyUs), String(bytes), responses], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${build} ${kind} run failed (${r.status}): ${r.stderr}`);
  const figures = JSON.parse(r.stdout.trim().split('\n').pop());
  process.stderr.write(`round ${round + 1} ${build} ${kind}: ${JSON.stringify(figures)}\n`);
  return figures;
}

// Each round runs every (build, kind) once, in an order that alternates between rounds.
function rounds(builds, kinds, n, run) {
  const jobs = Object.keys(builds).flatMap((build) => kinds.map((kind) => [build, kind]));
  const figures = Object.fromEntries(jobs.map(([build, kind]) => [`${build}/${kind}`, []]));
  for (let round = 0; round < n; round++) {
    for (const [build, kind] of round % 2 === 0 ? jobs : [...jobs].reverse()) figures[`${build}/${kind}`].push(run(build, kind, round));
  }
  return figures;
}

function test01Parent(builds, n, durationMs, busyUs) {
  const figures = rounds(builds, ['base', 'test01'], n, (build, kind, round) => runChild(build, builds[build], kind, durationMs, busyUs, 4, round));
  const out = { rounds: n, durationMs, busyUs, responses };
  for (const build of Object.keys(builds)) {
    const of = (kind, key) => median(figures[`${build}/${kind}`].map((f) => f[key]));
    const r = {
      base: { p90Us: of('base', 'p90Us'), meanUs: of('base', 'meanUs'), qps: of('base', 'qps') },
      test01: {
        p90Us: of('test01', 'p90Us'), meanUs: of('test01', 'meanUs'), qps: of('test01', 'qps'), logged: of('test01', 'logged'),
        sampledCallUs: of('test01', 'sampledCallUs'), unsampledCallUs: of('test01', 'unsampledCallUs'),
      },
    };
    r.test01OverBase = { p90: r.test01.p90Us / r.base.p90Us, mean: r.test01.meanUs / r.base.meanUs, qps: r.test01.qps / r.base.qps };
    // Each round's own ratio too: its two runs were next to each other.
    r.p90RatioByRound = figures[`${build}/test01`].map((f, i) => f.p90Us / figures[`${build}/base`][i].p90Us);
    out[build] = r;
  }
  console.log(JSON.stringify(out, null, 2));
}

function callsParent(builds, n, durationMs, busyUs, bytes) {
  const figures = rounds(builds, ['calls'], n, (build, kind, round) => runChild(build, builds[build], kind, durationMs, busyUs, bytes, round));
  const out = { rounds: n, durationMs, busyUs, bytes, responses };
  for (const build of Object.keys(builds)) {
    const runs = figures[`${build}/calls`];
    const of = (key) => median(runs.map((f) => f[key]));
    out[build] = {
      sampledNs: of('sampledNs'), unsampledNs: of('unsampledNs'), loggingNs: of('loggingNs'),
      loggingOverUnsampled: of('loggingNs') / of('unsampledNs'),
      timerNs: of('timerNs'), sampledCalls: of('nSampled'), unsampledCalls: of('nUnsampled'),
      byRound: runs.map((f) => [f.sampledNs, f.unsampledNs]),
    };
  }
  console.log(JSON.stringify(out, null, 2));
}

async function child(root, kind, durationMs, busyUs, bytes, fresh) {
  const dist = pathToFileURL(join(root, 'dist/')).href;
  const { createSyntheticQsl, querySamplesComplete, startTest } = await import(`${dist}index.js`);
  const { wantsResponse } = await import(`${dist}api/active.js`);
  const outdir = mkdtempSync(join(tmpdir(), 'loadgen-test01-'));
  const busyNs = BigInt(Math.round(busyUs * 1000));
  const response = new Uint8Array(bytes).map((_, i) => i + 1);
  // Call times in ns, by whether the response was sampled (preallocated: no GC in the run).
  const sampled = new Float64Array(1 << 20);
  const unsampled = new Float64Array(1 << 20);
  let nSampled = 0;
  let nUnsampled = 0;
  const sut = {
    name: `busy-${busyUs}us`,
    issueQuery(samples) {
      const until = process.hrtime.bigint() + busyNs;
      while (process.hrtime.bigint() < until);
      const id = samples[0].id;
      const logged = wantsResponse(id);
      const t0 = process.hrtime.bigint();
      querySamplesComplete(fresh ? [{ id, data: new Uint8Array(response) }] : [{ id, data: response }]);
      const ns = Number(process.hrtime.bigint() - t0);
      if (logged) { if (nSampled < sampled.length) sampled[nSampled++] = ns; }
      else if (nUnsampled < unsampled.length) unsampled[nUnsampled++] = ns;
    },
  };
  // The expected latency sets the expected query count, and so the sampling probability
  // (target / expected): the busy wait plus ~20 µs of JS and loadgen per query.
  const settings = { scenario: 'SingleStream', minDurationMs: durationMs, minQueryCount: 100, singleStreamExpectedLatencyNs: (busyUs + 20) * 1000 };
  let auditConfig = false;
  if (kind === 'test01') {
    auditConfig = join(outdir, 'audit.config');
    writeFileSync(auditConfig, `*.*.mode = 2\n*.*.accuracy_log_rng_seed = ${TEST01_SEED}\n*.*.accuracy_log_sampling_target = ${LOGGED}\n`);
  } else if (kind === 'calls') {
    settings.accuracyLogProbability = 0.5;
  }
  const result = await startTest(sut, createSyntheticQsl(1024), settings, { outdir }, { auditConfig });
  rmSync(outdir, { recursive: true, force: true });
  const medianOf = (xs, count) => median(xs.subarray(0, count));
  if (kind === 'calls') {
    // The clock's own cost, as the SUT reads it around a call.
    const empty = new Float64Array(100000);
    for (let i = 0; i < empty.length; i++) {
      const t0 = process.hrtime.bigint();
      empty[i] = Number(process.hrtime.bigint() - t0);
    }
    const timerNs = median(empty);
    const sampledNs = medianOf(sampled, nSampled) - timerNs;
    const unsampledNs = medianOf(unsampled, nUnsampled) - timerNs;
    console.log(JSON.stringify({
      kind, valid: result.valid, logged: result.accuracyLogRecords, nSampled, nUnsampled,
      timerNs, sampledNs, unsampledNs, loggingNs: sampledNs - unsampledNs,
    }));
    return;
  }
  console.log(JSON.stringify({
    kind,
    valid: result.valid,
    p90Us: result.targetPercentileLatencyNs / 1000,
    meanUs: result.latencyNs.mean / 1000,
    qps: result.qpsWithLoadgenOverhead,
    logged: result.accuracyLogRecords,
    sampledCallUs: nSampled === 0 ? 0 : medianOf(sampled, nSampled) / 1000,
    unsampledCallUs: nUnsampled === 0 ? 0 : medianOf(unsampled, nUnsampled) / 1000,
  }));
}
