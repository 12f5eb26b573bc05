import { readFileSync } from 'node:fs';
const rows = readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const path = (s) => (s.path ? `, ${s.path} path` : '');
const name = (s) => (s.kind === 'server' ? `Server ${s.sut} @ ${s.targetQps.toLocaleString('en-US')} QPS` : s.kind === 'single-stream' ? `SingleStream ${s.sut}` : `Offline ${s.sut}, 1M samples`) + path(s);
const groups = new Map();
for (const r of rows) { const k = JSON.stringify(r.spec); if (!groups.has(k)) groups.set(k, { spec: r.spec, base: [], main: [] }); groups.get(k)[r.v].push(r.r); }
const f = (x, d = 2) => (x == null ? '-' : x.toLocaleString('en-US', { maximumFractionDigits: d }));
console.log('| Trial (3 rounds, base and main alternating) | figure | base median | main median | main/base |');
console.log('|---|---|---|---|---|');
for (const { spec, base, main } of groups.values()) {
  const metrics = spec.kind === 'server'
    ? [['latency p50 (us)', (r) => r.latencyNs.p50 / 1000], ['latency p99 (us)', (r) => r.latencyNs.p99 / 1000], ['delivery lag p50 (us)', (r) => r.deliveryLagNs?.p50 / 1000], ['issue lateness p99 (us)', (r) => r.issueLatenessNs.p99 / 1000]]
    : spec.kind === 'single-stream'
      ? [['queries/s', (r) => r.queriesPerSecond ?? r.qps], ['latency p90 (ns)', (r) => r.p90Ns ?? r.latencyNs?.p90]]
      : [['samples/s', (r) => r.samplesPerSecond ?? r.samplesPerSec]];
  for (const [label, get] of metrics) {
    const b = base.map(get).filter((x) => x != null && !Number.isNaN(x)), m = main.map(get).filter((x) => x != null && !Number.isNaN(x));
    if (b.length === 0) continue;
    const bm = med(b), mm = med(m);
    console.log(`| ${name(spec)} | ${label} | ${f(bm)} | ${f(mm)} | ${f(mm / bm)} |`);
  }
}
