/**
 * A server of the network benchmark in its own process (lib/bench/net.ts
 * starts it under `taskset -c 1`):
 *   node dist/bench/net-serve.js stamp                 node:http, answers at once with its time stamps
 *   node dist/bench/net-serve.js openai-stub TTFT TPOT the OpenAI stub streamer (ms)
 * Prints "URL <url>" when listening; ends when stdin closes (its parent went
 * away) or on SIGTERM.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { startOpenAiStub } from '../serve/openai-stub.js';

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

async function main(): Promise<void> {
  const [kind, ttft, tpot] = process.argv.slice(2);
  let running: { url: string; close(): Promise<void> };
  if (kind === 'stamp') running = await startStampServer();
  else if (kind === 'openai-stub') {
    running = await startOpenAiStub({ host: '127.0.0.1', port: 0, ttftMs: Number(ttft), tpotMs: Number(tpot) });
  } else throw new Error(`net-serve: unknown server '${kind}' (stamp, openai-stub)`);
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
