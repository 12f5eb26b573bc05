/**
 * The fault server itself, read with a raw socket: each fault sends the
 * bytes, closes and resets the suite means it to, so a failing case of the
 * suite is the product's doing, not the server's.
 */
import { connect } from 'node:net';

import { afterAll, describe, expect, it } from 'vitest';

import {
  chatStream,
  HTTP_FAULTS,
  KSERVE_FAULTS,
  KSERVE_METADATA,
  sampleOf,
  SSE_FAULTS,
  startFaultServer,
  WHOLE_FAULTS,
  type Fault,
  type FaultProtocol,
  type FaultServer,
  type FaultServerOptions,
} from './fault-server.js';

/** What a raw client saw of one exchange. */
interface Seen {
  bytes: Buffer;
  text: string;
  /** Reads that brought bytes. */
  reads: number;
  /** The server closed (FIN). */
  ended: boolean;
  /** The connection was reset. */
  reset: boolean;
  /** Nothing ended the connection within the wait. */
  open: boolean;
}

const servers: FaultServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function server(options: FaultServerOptions): Promise<FaultServer> {
  const s = await startFaultServer(options);
  servers.push(s);
  return s;
}

/**
 * Complete final (not 1xx) responses at the start of `bytes`: those framed by
 * Content-Length or chunked whose bytes are all there, and bodiless 204s.
 */
function finalResponses(bytes: Buffer): number {
  let at = 0;
  let count = 0;
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n', at);
    if (end < 0) return count;
    const head = bytes.toString('latin1', at, end);
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(head);
    if (status === null) return count;
    at = end + 4;
    const code = Number(status[1]);
    if (code < 200) continue;
    if (code === 204) {
      count++;
      continue;
    }
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      const last = bytes.indexOf('\r\n0\r\n\r\n', at - 2);
      if (last < 0) return count;
      at = last + 7;
    } else if (length !== null) {
      if (bytes.length < at + Number(length[1])) return count;
      at += Number(length[1]);
    } else return count;
    count++;
  }
}

/**
 * Sends raw request bytes; collects what comes back until a close, a reset,
 * `responses` complete responses (and a moment more, for a close right after
 * them) or `idleMs` of silence.
 */
function exchange(port: number, request: string | Buffer, idleMs = 500, responses = 1): Promise<Seen> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const seen = { reads: 0, ended: false, reset: false, open: false };
    let timer: NodeJS.Timeout | undefined;
    const finish = (): void => {
      clearTimeout(timer);
      const bytes = Buffer.concat(chunks);
      resolve({ bytes, text: bytes.toString('latin1'), ...seen });
      socket.destroy();
    };
    const wait = (ms: number): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        seen.open = true;
        finish();
      }, ms);
    };
    socket.on('connect', () => {
      socket.write(request);
      wait(idleMs);
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      seen.reads++;
      wait(finalResponses(Buffer.concat(chunks)) >= responses ? 30 : idleMs);
    });
    socket.on('end', () => {
      seen.ended = true;
      finish();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET') seen.reset = true;
      finish();
    });
  });
}

const post = (body: string): string => `POST /infer HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/** One exchange with a server serving `fault` to every request. */
// 2 s of silence ends an exchange: a loaded machine's slow close or reset still counts as one.
async function faultExchange(fault: Fault, protocol: FaultProtocol = 'http', idleMs = 2000): Promise<Seen> {
  const s = await server({ protocol, fault });
  return exchange(s.port, post('{"x":3}'), idleMs);
}

/** The head and body of the first response in `text`. */
function split(text: string): { head: string; body: string; status: string } {
  const end = text.indexOf('\r\n\r\n');
  const head = end < 0 ? text : text.slice(0, end);
  return { head, body: end < 0 ? '' : text.slice(end + 4), status: head.split('\r\n')[0]! };
}

const contentLength = (head: string): number[] => [...head.matchAll(/^content-length: *(.*)$/gim)].map((m) => Number(m[1]));

describe('fault server: probes and requests', () => {
  it('answers every protocol probe, and reads the sample each request names', async () => {
    const s = await server({ protocol: 'kserve' });
    const models = split((await exchange(s.port, 'GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n')).text);
    expect(JSON.parse(models.body)).toMatchObject({ data: [{ id: 'm' }] });
    const meta = split((await exchange(s.port, 'GET /v2/models/m HTTP/1.1\r\nhost: x\r\n\r\n')).text);
    expect(JSON.parse(meta.body)).toEqual(KSERVE_METADATA);
    for (const path of ['/v2/health/ready', '/v2/models/m/ready', '/v2', '/']) {
      expect(split((await exchange(s.port, `GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`)).text).status, path).toBe('HTTP/1.1 200 OK');
    }
    expect(sampleOf(Buffer.from('{"model":"m","messages":[{"role":"user","content":"sample 5"}]}'))).toBe(5);
    expect(sampleOf(Buffer.from('{"x":3}'))).toBe(3);
    expect(sampleOf(Buffer.from('{"inputs":[{"name":"x","shape":[1,1],"datatype":"FP32","data":[7]}]}'))).toBe(7);
    const seen = await exchange(s.port, post('{"inputs":[{"name":"x","shape":[1,1],"datatype":"FP32","data":[7]}]}'));
    expect(JSON.parse(split(seen.text).body)).toMatchObject({ outputs: [{ name: 'y', data: [7] }] });
    expect(s.bySample.get(7)).toBe(1);
  });

  it('keeps a connection alive across requests, and serves the fault only where `faulted` says', async () => {
    const s = await server({ protocol: 'http', fault: HTTP_FAULTS['status-500'], faulted: (r) => r.sample % 2 === 1 });
    const seen = await exchange(s.port, post('{"x":2}') + post('{"x":1}') + post('{"x":4}'), 500, 3);
    expect([...seen.text.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1])).toEqual(['200', '500', '200']);
    expect(seen.open).toBe(true);
    expect(s.inferences).toBe(3);
  });

  it('closes connections beyond maxConnections at once', async () => {
    const s = await server({ protocol: 'http', maxConnections: 2, fault: HTTP_FAULTS['never-answers'] });
    const seen = await Promise.all([0, 1, 2].map(() => exchange(s.port, post('{"x":1}'), 200)));
    expect(seen.filter((x) => x.open)).toHaveLength(2);
    expect(seen.filter((x) => x.ended || x.reset)).toHaveLength(1);
    expect(s.connections).toBe(3);
  });

  it('early: answers on the head, before the body has come, and reads the body after', async () => {
    const s = await server({ protocol: 'http', early: true, fault: HTTP_FAULTS['good'] });
    const body = '{"x":1}'.padEnd(1000, ' ');
    const head = `POST /infer HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n\r\n`;
    // Only the head: the answer comes all the same.
    const seen = await exchange(s.port, head, 200);
    expect(split(seen.text).status).toBe('HTTP/1.1 200 OK');
    // The body after the answer is read and dropped; the next request is answered.
    const twice = await exchange(s.port, head + body + post('{"x":2}'), 500, 2);
    expect([...twice.text.matchAll(/HTTP\/1\.1 200/g)]).toHaveLength(2);
  });
});

describe('fault server: HTTP faults send what they say', () => {
  it('good, good-chunked', async () => {
    const good = split((await faultExchange(HTTP_FAULTS['good'])).text);
    expect(good.status).toBe('HTTP/1.1 200 OK');
    expect(contentLength(good.head)).toEqual([good.body.length]);
    expect(JSON.parse(good.body)).toEqual({ y: 3 });
    const c = split((await faultExchange(HTTP_FAULTS['good-chunked'])).text);
    expect(c.head).toMatch(/transfer-encoding: chunked/);
    expect(c.body).toMatch(/^[0-9a-f]+\r\n.*\r\n[0-9a-f]+\r\n.*\r\n0\r\n\r\n$/s);
  });

  it('resets and closes at every stage', async () => {
    const rbh = await faultExchange(HTTP_FAULTS['reset-before-head']);
    expect([rbh.bytes.length, rbh.reset]).toEqual([0, true]);
    const cbh = await faultExchange(HTTP_FAULTS['close-before-head']);
    expect([cbh.bytes.length, cbh.ended, cbh.reset]).toEqual([0, true, false]);
    const status = await faultExchange(HTTP_FAULTS['reset-mid-status-line']);
    expect([status.text, status.reset]).toEqual(['HTTP/1.1 20', true]);
    const partial = await faultExchange(HTTP_FAULTS['partial-head-close']);
    expect(partial.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(partial.text).not.toContain('\r\n\r\n');
    expect(partial.ended).toBe(true);
    const afterHead = await faultExchange(HTTP_FAULTS['reset-after-head']);
    expect(split(afterHead.text).body).toBe('');
    expect(afterHead.text).toContain('\r\n\r\n');
    expect(afterHead.reset).toBe(true);
    const midBody = await faultExchange(HTTP_FAULTS['reset-mid-body']);
    const mb = split(midBody.text);
    expect(mb.body.length).toBeGreaterThan(0);
    expect(mb.body.length).toBeLessThan(contentLength(mb.head)[0]!);
    expect(midBody.reset).toBe(true);
    for (const name of ['reset-mid-chunk', 'close-mid-chunk'] as const) {
      const seen = await faultExchange(HTTP_FAULTS[name]);
      const { body } = split(seen.text);
      const size = parseInt(body.slice(0, body.indexOf('\r\n')), 16);
      expect(body.length - body.indexOf('\r\n') - 2, name).toBeLessThan(size);
      expect(name === 'reset-mid-chunk' ? seen.reset : seen.ended && !seen.reset, name).toBe(true);
    }
  });

  it('wrong lengths and framing', async () => {
    const larger = await faultExchange(HTTP_FAULTS['content-length-larger-then-close']);
    const l = split(larger.text);
    expect(contentLength(l.head)[0]).toBe(l.body.length + 100);
    expect(larger.ended).toBe(true);
    const smaller = await faultExchange(HTTP_FAULTS['content-length-smaller']);
    const s = split(smaller.text);
    expect(contentLength(s.head)[0]).toBe(s.body.length >> 1);
    expect(smaller.ended).toBe(true);
    const conflict = split((await faultExchange(HTTP_FAULTS['content-length-conflict'])).text);
    const lengths = contentLength(conflict.head);
    expect(lengths).toHaveLength(2);
    expect(lengths[0]).not.toBe(lengths[1]);
    expect(split((await faultExchange(HTTP_FAULTS['content-length-invalid'])).text).head).toMatch(/content-length: \+\d+/);
    const bare = (await faultExchange(HTTP_FAULTS['bare-lf-head'])).text;
    expect(bare).toMatch(/^HTTP\/1\.1 200 OK\ncontent-type: [^\r\n]+\ncontent-length: \d+\n\n\{/);
    expect(bare).not.toContain('\r');
    const tecl = split((await faultExchange(HTTP_FAULTS['transfer-encoding-and-content-length'])).text);
    expect(tecl.head).toMatch(/transfer-encoding: chunked/);
    expect(contentLength(tecl.head)).toEqual([tecl.body.length]);
    expect(split((await faultExchange(HTTP_FAULTS['chunk-size-not-hex'])).text).body).toMatch(/^zz\r\n/);
    const missing = split((await faultExchange(HTTP_FAULTS['chunk-missing-crlf'])).text).body;
    const first = parseInt(missing.slice(0, missing.indexOf('\r\n')), 16);
    const after = missing.slice(missing.indexOf('\r\n') + 2 + first);
    expect(after.startsWith('\r\n')).toBe(false);
    expect(split((await faultExchange(HTTP_FAULTS['bad-status-line'])).text).status).toBe('HTTP/1.1 OK');
    expect((await faultExchange(HTTP_FAULTS['not-http'])).text).toMatch(/^SSH-2\.0/);
    expect(split((await faultExchange(HTTP_FAULTS['header-without-colon'])).text).head).toMatch(/\r\ncontent-type application\/json\r\n/);
  });

  it('trickles, interim answers, redirects, empty bodies, close-delimited bodies, closes, silence', async () => {
    const trickle = await faultExchange(HTTP_FAULTS['trickle']);
    expect(trickle.reads).toBeGreaterThan(3);
    expect(JSON.parse(split(trickle.text).body)).toEqual({ y: 3 });
    expect((await faultExchange(HTTP_FAULTS['100-continue'])).text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    expect((await faultExchange(HTTP_FAULTS['103-early-hints'])).text).toMatch(/^HTTP\/1\.1 103 Early Hints\r\nlink: [^\r]+\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    for (const code of [301, 302, 307] as const) {
      const r = split((await faultExchange(HTTP_FAULTS[`redirect-${code}`])).text);
      expect(r.status).toMatch(new RegExp(`^HTTP/1\\.1 ${code} `));
      expect(r.head).toMatch(/location: \/elsewhere/);
    }
    const empty = split((await faultExchange(HTTP_FAULTS['empty-200'])).text);
    expect([empty.status, contentLength(empty.head), empty.body]).toEqual(['HTTP/1.1 200 OK', [0], '']);
    const noContent = await faultExchange(HTTP_FAULTS['204-no-content']);
    expect(noContent.text).toBe('HTTP/1.1 204 No Content\r\n\r\n');
    const http10 = await faultExchange(HTTP_FAULTS['http10-close-delimited']);
    expect(split(http10.text).status).toBe('HTTP/1.0 200 OK');
    expect(contentLength(split(http10.text).head)).toEqual([]);
    expect(JSON.parse(split(http10.text).body)).toEqual({ y: 3 });
    expect(http10.ended).toBe(true);
    const http11 = await faultExchange(HTTP_FAULTS['http11-close-delimited']);
    expect(split(http11.text).head).not.toMatch(/content-length|transfer-encoding/i);
    expect(http11.ended).toBe(true);
    const closing = await faultExchange(HTTP_FAULTS['close-after-response']);
    expect(split(closing.text).head).not.toMatch(/connection:/i);
    expect(JSON.parse(split(closing.text).body)).toEqual({ y: 3 });
    expect(closing.ended).toBe(true);
    expect(split((await faultExchange(HTTP_FAULTS['status-500'])).text).status).toBe('HTTP/1.1 500 Internal Server Error');
    const silent = await faultExchange(HTTP_FAULTS['never-answers'], 'http', 200);
    expect([silent.bytes.length, silent.open]).toEqual([0, true]);
  });
});

describe('fault server: protocol faults', () => {
  const body = async (fault: Fault, protocol: FaultProtocol): Promise<string> => split((await faultExchange(fault, protocol)).text).body;

  it('SSE', async () => {
    const good = chatStream();
    expect(good).toMatch(/^(data: [^\n]+\n\n)+$/);
    expect(good.endsWith('data: [DONE]\n\n')).toBe(true);
    const split1 = await faultExchange(SSE_FAULTS['sse-split-every-byte'], 'openai-stream');
    expect(split(split1.text).body).toBe(good);
    expect(await body(SSE_FAULTS['sse-crlf'], 'openai-stream')).toBe(good.replace(/\n/g, '\r\n'));
    expect(await body(SSE_FAULTS['sse-cr'], 'openai-stream')).toBe(good.replace(/\n/g, '\r'));
    const fields = await body(SSE_FAULTS['sse-comments-and-unknown-fields'], 'openai-stream');
    expect(fields).toMatch(/^: keep-alive\n\n/);
    expect(fields).toMatch(/\nx-vendor: 1\nevent: message\ndata: \[DONE\]\n\n$/);
    expect(await body(SSE_FAULTS['sse-no-final-blank-line'], 'openai-stream')).toBe(good.slice(0, -1));
    const chunks = split((await faultExchange(SSE_FAULTS['sse-chunked-split-events'], 'openai-stream')).text).body;
    expect(chunks.replace(/(^|\r\n)[0-9a-f]+\r\n/g, '')).toBe(`${good}\r\n`);
    expect(await body(SSE_FAULTS['sse-missing-done'], 'openai-stream')).not.toContain('[DONE]');
    expect(await body(SSE_FAULTS['sse-event-error'], 'openai-stream')).toContain('event: error\ndata: {"error"');
    expect(await body(SSE_FAULTS['sse-data-not-json'], 'openai-stream')).toContain('data: {"choices": [tru\n\n');
    expect(await body(SSE_FAULTS['sse-usage-no-text'], 'openai-stream')).toBe('data: {"choices":[],"usage":{"completion_tokens":4}}\n\ndata: [DONE]\n\n');
    const reasoning = await body(SSE_FAULTS['sse-reasoning-only'], 'openai-stream');
    expect(reasoning).toContain('"reasoning_content":"Let me"');
    expect(reasoning).not.toContain('"content"');
    const tools = await body(SSE_FAULTS['sse-tool-calls-only'], 'openai-stream');
    expect(tools).toContain('"tool_calls"');
    expect(tools).not.toContain('"content"');
    expect(await body(WHOLE_FAULTS['json-not-json'], 'openai-whole')).toBe('{"choices": [');
  });

  it('KServe binary outputs', async () => {
    for (const [name, byte, length] of [['kserve-binary-whitespace', 10, undefined], ['kserve-header-length-999999', 65, 999999]] as const) {
      const r = split((await faultExchange(KSERVE_FAULTS[name], 'kserve')).text);
      const header = Number(/inference-header-content-length: (\d+)/.exec(r.head)![1]);
      const json = r.body.slice(0, r.body.lastIndexOf('}') + 1);
      expect(header, name).toBe(length ?? json.length);
      expect(JSON.parse(json), name).toMatchObject({ outputs: [{ datatype: 'UINT8', shape: [1, 1], parameters: { binary_data_size: 1 } }] });
      expect(r.body.slice(json.length), name).toBe(String.fromCharCode(byte));
    }
  });
});
