/**
 * A server of the network benchmark in its own process (lib/bench/net.ts
 * starts it under `taskset -c 1`):
 *   node dist/bench/net-serve.js stamp                 node:http, answers at once with its time stamps
 *   node dist/bench/net-serve.js openai-stub TTFT TPOT [SPIN]  the OpenAI stub streamer (ms; SPIN: its timerSpinMs)
 *   node dist/bench/net-serve.js echo               a TCP echo (the token row's idle round-trip floor)
 * Prints "URL <url>" when listening; ends when stdin closes (its parent went
 * away) or on SIGTERM. The stub answers a line "lateness [SKIP]" on stdin with
 * "LATENESS <json>": its own lateness against its schedule over the requests
 * since the last such line, the first SKIP of them left out (a warm-up's):
 * what of the client's TTFT/TPOT error is the stub's.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';

import { startOpenAiStub, type OpenAiStub } from '../serve/openai-stub.js';

/** process.hrtime is CLOCK_MONOTONIC on Linux: the clock of the core's clockNs(). */
const monoNs = (): bigint => process.hrtime.bigint();

const stamp = (ns: bigint): string => ns.toString().padStart(19, '0');

/** The node:http twin of benchmarks/stamp-server.c: same headers, same 40-byte body. */
async function startStampServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer({ keepAliveTimeout: 60_000 }, (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const recv = stamp(monoNs());
      const send = stamp(monoNs());
      res.writeHead(200, {
        'Content-Type': 'text/plain',
        'Content-Length': '40',
        'x-recv-ns': recv,
        'x-send-ns': send,
      });
      res.end(`${recv} ${send}\n`);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Writes back every byte it reads (no delay): the other end of a bare round trip. */
async function startEchoServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.setNoDelay(true);
    socket.on('data', (chunk) => socket.write(chunk));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `tcp://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

function percentiles(values: number[]): { p50: number; p99: number } {
  const s = [...values].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

/** The QSL index in a bench prompt ('bench prompt 17'; lib/bench/net-trial.ts writes them), -1 in any other. */
function benchPromptIndex(prompt: string): number {
  const m = /^bench prompt (\d+)$/.exec(prompt);
  return m ? Number(m[1]) : -1;
}

/**
 * The stub's first token − (received + ttft), and its mean token gap − tpot, per streamed request from `from`;
 * and per request in arrival order its prompt's QSL index and hold (first token sent − received), which a bench
 * pairs with the client's TTFT of the same request (lib/bench/net-ttft.ts).
 */
function stubLateness(stub: OpenAiStub, from: number, ttftMs: number, tpotMs: number) {
  const records = stub.records().slice(from).filter((r) => r.stream && r.tokenSentNs.length > 1);
  return {
    requests: records.length,
    firstTokenHolds: records.map((r) => [benchPromptIndex(r.prompt), r.tokenSentNs[0]! - r.receivedNs]),
    ttftNs: percentiles(records.map((r) => r.tokenSentNs[0]! - r.receivedNs - ttftMs * 1e6)),
    tpotNs: percentiles(records.map((r) => (r.tokenSentNs[r.tokenSentNs.length - 1]! - r.tokenSentNs[0]!) / (r.tokenSentNs.length - 1) - tpotMs * 1e6)),
  };
}

async function main(): Promise<void> {
  const [kind, ttft, tpot, spin] = process.argv.slice(2);
  let running: { url: string; close(): Promise<void> };
  if (kind === 'stamp') running = await startStampServer();
  else if (kind === 'echo') running = await startEchoServer();
  else if (kind === 'openai-stub') {
    const ttftMs = Number(ttft);
    const tpotMs = Number(tpot);
    const stub = await startOpenAiStub({ host: '127.0.0.1', port: 0, ttftMs, tpotMs, recordTimes: true, timerSpinMs: Number(spin ?? 0) });
    running = stub;
    let from = 0;
    let pending = '';
    process.stdin.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        const ask = /^lateness(?: (\d+))?$/.exec(line);
        if (!ask) continue;
        const lateness = stubLateness(stub, from + Number(ask[1] ?? 0), ttftMs, tpotMs);
        from = stub.records().length;
        process.stdout.write(`LATENESS ${JSON.stringify(lateness)}\n`);
      }
    });
  } else throw new Error(`net-serve: unknown server '${kind}' (stamp, echo, openai-stub)`);
  process.stdout.write(`URL ${running.url}\n`);
  const stop = () => void running.close().finally(() => process.exit(0));
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
