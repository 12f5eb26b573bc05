// Where a TTFT error goes, request by request (issue 12, "TTFT precision"), on the undici
// transport. Runs the bench's token row by hand: the OpenAI stub in its own process on CPU 1 with socket-level stamps,
// loadgen's OpenAI SUT in this process (on any CPU, as the bench; under `taskset -c 0` to
// see a pinned client), Server at 20 requests/s, 20 ms + 5 ms/token, 16 tokens; then a bare
// 1-byte TCP round trip between the same two processes' CPUs after the same idle gap (the
// floor any Node client and server pay). Diagnosis only: it stamps sockets through
// diagnostics_channel and wraps node:http in the stub's process.
//
//   npm run build:native && npm run build:ts
//   node benchmarks/ttft-breakdown.mjs [seconds=10] [stubSpinMs=1] [warmupMs=3000] [dispatch=wake]
//
// Requests are paired with the stub's records by arrival order (at 20/s two requests
// ~never cross). Every time is CLOCK_MONOTONIC (clockNs() and process.hrtime agree on Linux).
import { spawn } from 'node:child_process';
import dc from 'node:diagnostics_channel';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);
const dist = new URL('../dist/', import.meta.url).href;
const TTFT_MS = 20;
const TPOT_MS = 5;

/** The stub's process: its records and the time each socket read came in. */
async function stubProcess(spinMs) {
  const mono = () => Number(process.hrtime.bigint());
  const reads = [];
  const create = http.createServer;
  http.createServer = (...args) => {
    const server = create(...args);
    server.on('connection', (socket) => socket.on('data', () => reads.push(mono())));
    return server;
  };
  syncBuiltinESMExports();
  const { startOpenAiStub } = await import(`${dist}serve/openai-stub.js`);
  const stub = await startOpenAiStub({ port: 0, ttftMs: TTFT_MS, tpotMs: TPOT_MS, recordTimes: true, timerSpinMs: spinMs });
  let from = 0;
  process.stdin.on('data', (line) => {
    if (String(line).startsWith('mark')) {
      from = stub.records().length;
      reads.length = 0;
    } else process.stdout.write(`DUMP ${JSON.stringify({ records: stub.records().slice(from), reads })}\n`);
  });
  process.stdin.on('end', () => process.exit(0));
  process.stdout.write(`URL ${stub.url}\n`);
}

/** A 1-byte echo on CPU 1 for the floor. */
function echoProcess() {
  const server = net.createServer((c) => {
    c.setNoDelay(true);
    c.on('data', (b) => c.write(b));
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`URL ${server.address().port}\n`));
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

function child(args) {
  const proc = spawn('taskset', ['-c', '1', process.execPath, self, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const next = (prefix) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${prefix}line from the child`)), 30_000);
    const look = () => {
      const at = out.indexOf(prefix);
      const nl = at < 0 ? -1 : out.indexOf('\n', at);
      if (nl < 0) return;
      proc.stdout.off('data', onData);
      clearTimeout(timer);
      const line = out.slice(at + prefix.length, nl);
      out = out.slice(nl + 1);
      resolve(line);
    };
    const onData = (chunk) => {
      out += chunk;
      look();
    };
    proc.stdout.on('data', onData);
    look();
  });
  return { proc, next };
}

const pct = (values, q) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))];
};
const us = (ns) => (ns / 1e3).toFixed(1).padStart(9);
const row = (name, values) =>
  console.log(`  ${name.padEnd(46)} p50 ${us(pct(values, 0.5))} p90 ${us(pct(values, 0.9))} p99 ${us(pct(values, 0.99))} us (${values.length})`);

async function main() {
  const [seconds = '10', spinMs = '1', warmupMs = '3000', dispatch = 'wake'] = process.argv.slice(2);
  const { createOpenAiSut } = await import(`${dist}net/openai.js`);
  const { startTest } = await import(`${dist}api/start-test.js`);
  const clock = (await import(`${dist}native/index.js`)).loadNative().clockNs;
  const loadBefore = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];

  // The client's side: sockets opened, each socket read, undici's request created and its headers written.
  const events = { connect: [], read: [], create: [], send: [] };
  dc.subscribe('net.client.socket', ({ socket }) => {
    events.connect.push(clock());
    socket.on('data', () => events.read.push(clock()));
  });
  dc.subscribe('undici:request:create', () => events.create.push(clock()));
  dc.subscribe('undici:client:sendHeaders', () => events.send.push(clock()));

  const stub = child(['stub', spinMs]);
  const url = await stub.next('URL ');
  const dir = mkdtempSync(join(tmpdir(), 'loadgen-ttft-breakdown-'));
  try {
    const dataset = join(dir, 'prompts.jsonl');
    writeFileSync(dataset, Array.from({ length: 64 }, (_, i) => JSON.stringify({ prompt: `bench prompt ${i}`, max_tokens: 16 })).join('\n') + '\n');
    // undici: the script stamps its requests through undici's diagnostics channels (the native transport's are
    // the core's own: the bench's token row pairs them with the stub's holds, lib/bench/net-ttft.ts).
    const sut = await createOpenAiSut({ urls: [url], model: 'loadgen-stub', dataset, maxTokens: 16, transport: 'undici' });
    const issued = [];
    const issueQuery = sut.issueQuery.bind(sut);
    sut.issueQuery = (samples) => {
      const now = clock();
      for (let i = 0; i < samples.length; i++) issued.push(now);
      return issueQuery(samples);
    };
    const settings = { dispatch, scenario: 'Server', serverTargetQps: 20, useTokenLatencies: true, minQueryCount: 1 };
    if (Number(warmupMs) > 0) await startTest(sut, sut.qsl, { ...settings, minDurationMs: Number(warmupMs) }, { outdir: join(dir, 'warmup') });
    issued.length = 0;
    for (const list of Object.values(events)) list.length = 0;
    stub.proc.stdin.write('mark\n');
    const r = await startTest(sut, sut.qsl, { ...settings, minDurationMs: Number(seconds) * 1000 }, { outdir: join(dir, 'run') });
    await sut.close();
    stub.proc.stdin.write('dump\n');
    const { records, reads } = JSON.parse(await stub.next('DUMP '));
    stub.proc.stdin.end();

    const after = (list, t) => list.find((x) => x >= t);
    const parts = { create: [], send: [], arrive: [], parse: [], late: [], back: [], total: [] };
    const streamed = records.filter((x) => x.stream).sort((a, b) => a.receivedNs - b.receivedNs);
    let reconnects = 0;
    for (let k = 0; k < Math.min(issued.length, streamed.length); k++) {
      const t = issued[k];
      const rec = streamed[k];
      if (events.connect.some((c) => c >= t && c <= rec.receivedNs)) reconnects++;
      const create = after(events.create, t);
      const send = after(events.send, t);
      const arrive = after(reads, t);
      const back = after(events.read, rec.tokenSentNs[0]);
      if (create !== undefined) parts.create.push(create - t);
      if (send !== undefined && send <= rec.receivedNs) parts.send.push(send - t);
      if (arrive !== undefined && arrive <= rec.receivedNs) {
        parts.arrive.push(arrive - t);
        parts.parse.push(rec.receivedNs - arrive);
      }
      parts.late.push(rec.tokenSentNs[0] - rec.receivedNs - TTFT_MS * 1e6);
      if (back !== undefined) {
        parts.back.push(back - rec.tokenSentNs[0]);
        parts.total.push(back - t - TTFT_MS * 1e6);
      }
    }
    const ttft = r.tokens.ttftNs.percentiles;
    const tpot = r.tokens.tpotNs.percentiles;
    const lag = r.overhead?.deliveryLagNs;
    console.log(`load ${loadBefore} -> ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}; dispatch ${dispatch}, stub timerSpinMs ${spinMs}, warm-up ${warmupMs} ms, ${seconds} s at 20 requests/s`);
    console.log(`  loadgen: TTFT error p50 ${us(ttft[50] - TTFT_MS * 1e6)} p99 ${us(ttft[99] - TTFT_MS * 1e6)} us; TPOT error p50 ${us(tpot[50] - TPOT_MS * 1e6)} p99 ${us(tpot[99] - TPOT_MS * 1e6)} us`);
    if (lag) console.log(`  scheduled -> issueQuery (delivery lag)         p50 ${us(lag.p50)} p90 ${us(lag.p90)} p99 ${us(lag.p99)} us (${lag.count})`);
    row('issueQuery -> undici request created', parts.create);
    row('issueQuery -> request headers written', parts.send);
    row('issueQuery -> the stub reads it', parts.arrive);
    row('the stub reads it -> its receive stamp', parts.parse);
    row("the stub's first token - (receive + 20 ms)", parts.late);
    row('the stub writes it -> the client reads it', parts.back);
    row('issueQuery -> first token read - 20 ms', parts.total);
    console.log(`  requests that waited for a new connection: ${reconnects} of ${streamed.length}`);
  } finally {
    stub.proc.kill();
    rmSync(dir, { recursive: true, force: true });
  }

  // The floor: a 1-byte round trip between the two CPUs after a 50-ms idle gap (the mean gap at 20/s).
  const echo = child(['echo']);
  const port = Number(await echo.next('URL '));
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise((resolve) => socket.once('connect', resolve));
  const rtt = [];
  for (let i = 0; i < 100; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const t = clock();
    await new Promise((resolve) => {
      socket.once('data', resolve);
      socket.write('x');
    });
    rtt.push(clock() - t);
  }
  socket.destroy();
  echo.proc.stdin.end();
  row('floor: 1-byte TCP round trip after 50 ms idle', rtt);
}

const role = process.argv[2];
if (role === 'stub') await stubProcess(Number(process.argv[3]));
else if (role === 'echo') echoProcess();
else await main();
