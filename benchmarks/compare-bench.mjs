// Side by side: two `loadgen bench --json` reports (before, after), with after/before ratios.
import { readFileSync } from 'node:fs';
const [a, b] = process.argv.slice(2).map((f) => JSON.parse(readFileSync(f, 'utf8')));
const us = (ns) => (ns == null ? '-' : (ns / 1000).toFixed(2));
const ratio = (x, y) => (x > 0 && y != null ? (y / x).toFixed(2) : '-');
const key = (r) => `${r.sut} @ ${r.targetQps.toLocaleString('en-US')} QPS${r.pinned ? ' pinned' : ''}${r.dispatchSpinUs ? ` spin ${r.dispatchSpinUs}us` : ''}${r.wakeLeadUs ? ` lead ${r.wakeLeadUs}us` : ''}`;
console.log('| Server row | lat p50 us (before / after) | lat p99 us | late p99 us | lag p50 us | lag p99 us | p99 ratio after/before |');
console.log('|---|---|---|---|---|---|---|');
const rowsB = new Map(b.server.map((r) => [key(r), r]));
for (const r of a.server) {
  const s = rowsB.get(key(r));
  if (!s) continue;
  console.log(`| ${key(r)} | ${us(r.latencyNs.p50)} / ${us(s.latencyNs.p50)} | ${us(r.latencyNs.p99)} / ${us(s.latencyNs.p99)} | ${us(r.issueLatenessNs.p99)} / ${us(s.issueLatenessNs.p99)} | ${us(r.deliveryLagNs?.p50)} / ${us(s.deliveryLagNs?.p50)} | ${us(r.deliveryLagNs?.p99)} / ${us(s.deliveryLagNs?.p99)} | ${ratio(r.latencyNs.p99, s.latencyNs.p99)} |`);
}
const fmt = (v) => (typeof v === 'number' ? Math.round(v).toLocaleString('en-US') : JSON.stringify(v));
console.log('\n| Figure | SUT | before | after | after/before |');
console.log('|---|---|---|---|---|');
for (const name of ['serverMaxValidQps', 'singleStreamQps', 'singleStreamP90Ns', 'offlineSamplesPerSec']) {
  const x = a[name] ?? {}, y = b[name] ?? {};
  for (const sut of Object.keys(x)) {
    const xv = typeof x[sut] === 'object' && x[sut] !== null ? x[sut].median ?? x[sut].qps ?? x[sut].value : x[sut];
    const yv = typeof y[sut] === 'object' && y[sut] !== null ? y[sut].median ?? y[sut].qps ?? y[sut].value : y[sut];
    console.log(`| ${name} | ${sut} | ${fmt(xv)} | ${fmt(yv)} | ${ratio(xv, yv)} |`);
  }
}
console.log(`| bytesPerSample | - | ${JSON.stringify(a.bytesPerSample)} | ${JSON.stringify(b.bytesPerSample)} | |`);
console.log(`\nplatform before: ${JSON.stringify(a.platform)}\nplatform after: ${JSON.stringify(b.platform)}`);
