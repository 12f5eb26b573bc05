// What logging sampled responses costs a fast SUT (issue 23 item 15): SingleStream, a JS SUT
// that completes each query with a 4-byte response after a ~100 µs busy wait, a base run
// against a TEST01-like run (the reference's TEST01 audit.config: PerformanceOnly, its
// accuracy_log_rng_seed, and an accuracy_log_sampling_target that logs ~4,096 responses).
// Every run in a fresh process, base and TEST01 alternating, medians over the rounds. In the
// TEST01 runs the SUT also times its querySamplesComplete call (the completion, the hand-over
// of the next query and, for a sampled response, logging it): the issue path's cost of a
// sampled response against an unsampled one.
//
//   npm run build:native && npm run build:ts
//   node benchmarks/test01-logging.mjs [rounds=5] [durationMs=5000] [busyUs=100]
//
// LOADGEN_ADDON_PATH=<another loadgen.node> measures another build of the addon with the same
// JS (the before/after of benchmarks/RESULTS.md).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);
const dist = new URL('../dist/', import.meta.url).href;
// The reference's TEST01 seed (compliance/nvidia/TEST01/audit.config).
const TEST01_SEED = '720381539243781796';
const LOGGED = 4096;

if (process.argv[2] === '--child') {
  await child(process.argv[3], Number(process.argv[4]), Number(process.argv[5]));
} else {
  parent(Number(process.argv[2] ?? 5), Number(process.argv[3] ?? 5000), Number(process.argv[4] ?? 100));
}

function parent(rounds, durationMs, busyUs) {
  const runs = { base: [], test01: [] };
  for (let round = 0; round < rounds; round++) {
    for (const kind of round % 2 === 0 ? ['base', 'test01'] : ['test01', 'base']) {
      const r = spawnSync(process.execPath, [self, '--child', kind, String(durationMs), String(busyUs)], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${kind} run failed (${r.status}): ${r.stderr}`);
      const figures = JSON.parse(r.stdout.trim().split('\n').pop());
      runs[kind].push(figures);
      process.stderr.write(`round ${round + 1} ${kind}: ${JSON.stringify(figures)}\n`);
    }
  }
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const of = (kind, key) => median(runs[kind].map((f) => f[key]));
  const out = {
    rounds, durationMs, busyUs,
    base: { p90Us: of('base', 'p90Us'), meanUs: of('base', 'meanUs'), qps: of('base', 'qps') },
    test01: {
      p90Us: of('test01', 'p90Us'), meanUs: of('test01', 'meanUs'), qps: of('test01', 'qps'), logged: of('test01', 'logged'),
      sampledCallUs: of('test01', 'sampledCallUs'), unsampledCallUs: of('test01', 'unsampledCallUs'),
    },
  };
  out.test01OverBase = { p90: out.test01.p90Us / out.base.p90Us, mean: out.test01.meanUs / out.base.meanUs, qps: out.test01.qps / out.base.qps };
  console.log(JSON.stringify(out, null, 2));
}

async function child(kind, durationMs, busyUs) {
  const { createSyntheticQsl, querySamplesComplete, startTest } = await import(`${dist}index.js`);
  const { wantsResponse } = await import(`${dist}api/active.js`);
  const outdir = mkdtempSync(join(tmpdir(), 'loadgen-test01-'));
  const busyNs = BigInt(Math.round(busyUs * 1000));
  const response = new Uint8Array([1, 2, 3, 4]);
  // Call times in ns, by whether the response was sampled (preallocated: no GC in the run).
  const sampled = new Float64Array(1 << 16);
  const unsampled = new Float64Array(1 << 20);
  let nSampled = 0;
  let nUnsampled = 0;
  const sut = {
    name: 'busy-100us',
    issueQuery(samples) {
      const until = process.hrtime.bigint() + busyNs;
      while (process.hrtime.bigint() < until);
      const id = samples[0].id;
      const logged = wantsResponse(id);
      const t0 = process.hrtime.bigint();
      querySamplesComplete([{ id, data: response }]);
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
  }
  const result = await startTest(sut, createSyntheticQsl(1024), settings, { outdir }, { auditConfig });
  const median = (xs, n) => {
    const s = Array.from(xs.subarray(0, n)).sort((a, b) => a - b);
    return n === 0 ? 0 : s[Math.floor(n / 2)];
  };
  rmSync(outdir, { recursive: true, force: true });
  console.log(JSON.stringify({
    kind,
    valid: result.valid,
    p90Us: result.targetPercentileLatencyNs / 1000,
    meanUs: result.latencyNs.mean / 1000,
    qps: result.qpsWithLoadgenOverhead,
    logged: result.accuracyLogRecords,
    sampledCallUs: median(sampled, nSampled) / 1000,
    unsampledCallUs: median(unsampled, nUnsampled) / 1000,
  }));
}
