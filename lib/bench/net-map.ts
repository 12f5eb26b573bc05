/**
 * The `--sut http` mapping module of the network benchmark
 * (createHttpSut({ request: <this file> })): sample i is GET /s/i on the
 * bench's stamp server, whose body is "RECV SEND\n" (its CLOCK_MONOTONIC
 * stamps, 19 digits each). `response` keeps each answer's stamps by sample
 * index in `stampRecords`, which the trial reads after the run (same module
 * instance on the thread that imported it: wake and poll dispatch).
 */
import type { NodeProbe } from '../net/protocol.js';

/** Distinct sample indices: at 10k requests/s an index comes back every ~6 s, so it is never twice in flight. */
export const totalSampleCount = 65_536;

/**
 * The server's stamps of each answered request, by sample index, in the
 * order the responses were read. Growable typed arrays: no object per response.
 */
export class StampRecords {
  count = 0;
  index = new Float64Array(1 << 16);
  recv = new Float64Array(1 << 16);
  send = new Float64Array(1 << 16);

  push(index: number, recv: number, send: number): void {
    if (this.count === this.index.length) {
      const grow = (a: Float64Array) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.index = grow(this.index);
      this.recv = grow(this.recv);
      this.send = grow(this.send);
    }
    this.index[this.count] = index;
    this.recv[this.count] = recv;
    this.send[this.count] = send;
    this.count++;
  }
}

export const stampRecords = new StampRecords();

/** A 19-digit decimal at `at` (CLOCK_MONOTONIC ns: exact in a double for ~104 days of uptime); NaN if not digits. */
function digits19(bytes: Uint8Array, at: number): number {
  let n = 0;
  for (let i = at; i < at + 19; i++) {
    const d = bytes[i]! - 48;
    if (!(d >= 0 && d <= 9)) return Number.NaN;
    n = n * 10 + d;
  }
  return n;
}

export function request(index: number): { method: 'GET'; path: string } {
  return { method: 'GET', path: `/s/${index}` };
}

/** Records the stamps; a body without them fails the sample (malformed_response). */
export function response({ index, body }: { index: number; body: Uint8Array }): undefined {
  const recv = body.length === 40 ? digits19(body, 0) : Number.NaN;
  const send = body.length === 40 ? digits19(body, 20) : Number.NaN;
  if (Number.isNaN(recv) || Number.isNaN(send)) throw new Error(`no server stamps in a ${body.length}-byte body`);
  stampRecords.push(index, recv, send);
  return undefined;
}

export async function name(node: NodeProbe): Promise<string> {
  const r = await node.request('GET', '/name');
  if (r.status !== 200 || r.body.length !== 40) throw new Error(`${node.origin} is not the bench's stamp server (status ${r.status})`);
  return 'stamp-server';
}
