/**
 * The native transport of a network SUT (native/http_client.h): the core's
 * issue thread writes each request on an idle keep-alive connection itself
 * and a reactor thread reads the response, stamps its last byte and
 * completes the sample, so no JS runs between a query's due time and its
 * completion. Responses whose bodies are logged (accuracy mode, sampled
 * accuracy-log entries) come back here, already stamped, for the protocol's
 * reader. undici (lib/net/client.ts) stays the transport for https, HTTP/2,
 * streamed tokens, per-node path prefixes and dispatch workers.
 */
import { wantsResponse } from '../api/active.js';
import { querySampleComplete, querySampleFailed } from '../api/completion.js';
import { NetworkSetupError } from '../errors.js';
import { loadNative, type NativeHttpSut } from '../native/index.js';
import type { ClientConfig } from './client-config.js';
import type { NodeAddress } from './nodes.js';
import { createStatsBuffer, nodeSlice, NodeStatsRecorder } from './node-stats.js';
import type { NetworkProtocol, PreparedRequest } from './protocol.js';

/** `transport`: which HTTP client sends the requests. */
export const TRANSPORTS = ['auto', 'native', 'undici'] as const;
export type TransportChoice = (typeof TRANSPORTS)[number];

const encoder = new TextEncoder();

/**
 * Why the native transport cannot serve this SUT ('' when it can): it speaks
 * plain HTTP/1.1 and reads whole responses.
 */
export function nativeTransportObstacle(protocol: NetworkProtocol, addresses: readonly NodeAddress[], config: ClientConfig): string {
  const native = loadNative();
  if (!native.nativeHttpAvailable) return `the native HTTP client is not available on ${process.platform}`;
  if (protocol.streamsTokens) return `the ${protocol.kind} protocol streams tokens (read chunk by chunk)`;
  if (config.http2) return 'http2 is on';
  const https = addresses.find((a) => !a.origin.startsWith('http:'));
  if (https !== undefined) return `node ${https.url} is not plain http:`;
  if (addresses.some((a) => a.basePath !== addresses[0]!.basePath)) return 'the nodes have different path prefixes';
  return '';
}

/** One node's host and port as the native client connects to it. */
function nativeNode(address: NodeAddress): { host: string; port: number; label: string } {
  const url = new URL(address.origin);
  // URL keeps IPv6 literals in brackets; getaddrinfo wants them bare.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port !== '' ? Number(url.port) : 80;
  return { host, port, label: address.url };
}

/** The native client with the protocol's requests loaded into it. */
export class NativeTransport {
  readonly handle: NativeHttpSut;
  private readonly basePath: string;
  private readonly authorization: string;
  /** The JS side's corrections of the native counts (a body the reader refused), summed with them. */
  readonly corrections: Float64Array;
  private readonly correctionRecorders: NodeStatsRecorder[];

  constructor(
    private readonly protocol: NetworkProtocol,
    private readonly addresses: readonly NodeAddress[],
    config: ClientConfig,
    readEveryResponse: boolean,
  ) {
    this.basePath = addresses[0]!.basePath;
    this.corrections = createStatsBuffer(addresses.length, 1, false);
    this.correctionRecorders = addresses.map((_, i) => new NodeStatsRecorder(nodeSlice(this.corrections, addresses.length, 0, i)));
    this.authorization = config.apiKey === undefined ? '' : `authorization: Bearer ${config.apiKey}\r\n`;
    this.handle = new (loadNative().NativeHttpSut)({
      nodes: addresses.map(nativeNode),
      connectionsPerNode: config.connections,
      leastOutstanding: config.balance === 'least-outstanding',
      connectTimeoutMs: config.connectTimeoutMs,
      requestTimeoutMs: config.requestTimeoutMs,
      nodeBackoffMs: config.backoffMs,
      hostReadsEveryBody: readEveryResponse,
      ...(config.apiKey !== undefined ? { secret: config.apiKey } : {}),
      onResponse: (id, index, stampNs, body, node) => this.read(id, index, stampNs, body, node),
    });
  }

  /** Opens every node's connections (after the probes): NetworkSetupError naming the node otherwise. */
  async start(): Promise<void> {
    const error = await this.handle.start();
    if (error !== '') throw new NetworkSetupError(this.redact(error), {});
  }

  /** loadSamplesToRam: the protocol builds its requests, each is copied into the native table. */
  async load(indices: readonly number[]): Promise<void> {
    await this.protocol.load(indices);
    for (const index of indices) {
      const { line, rest } = this.encode(this.protocol.request(index));
      this.handle.setRequest(index, line, rest);
    }
  }

  async unload(indices: readonly number[]): Promise<void> {
    // The whole table goes: loads come in sets (one per series or FindPeak search).
    if (this.handle.outstanding() === 0) this.handle.clearRequests();
    await this.protocol.unload(indices);
  }

  /** A request's bytes: the request line, then (after the node's Host line) headers and body. */
  encode(request: PreparedRequest): { line: Uint8Array; rest: Uint8Array } {
    const path = this.basePath === '' ? request.path : this.basePath + request.path;
    if (/[\s\0]/.test(path)) throw new NetworkSetupError(`the ${this.protocol.kind} protocol built a request path with white space or NUL: '${path.slice(0, 80)}'`, {});
    const body = request.body === undefined ? undefined : typeof request.body === 'string' ? encoder.encode(request.body) : request.body;
    let head = '';
    for (const [name, value] of Object.entries(request.headers)) {
      const lower = name.toLowerCase();
      // The transport's own: framing, host and authorization.
      if (lower === 'host' || lower === 'content-length' || lower === 'transfer-encoding' || lower === 'authorization' || lower === 'connection') continue;
      if (/[\r\n\0]/.test(name) || /[\r\n\0]/.test(value)) throw new NetworkSetupError(`the ${this.protocol.kind} protocol built a header with a line break or NUL: '${name.slice(0, 80)}'`, {});
      head += `${name}: ${value}\r\n`;
    }
    head += this.authorization;
    if (body !== undefined || request.method === 'POST') head += `content-length: ${body?.byteLength ?? 0}\r\n`;
    head += '\r\n';
    const headBytes = encoder.encode(head);
    const rest = new Uint8Array(headBytes.byteLength + (body?.byteLength ?? 0));
    rest.set(headBytes, 0);
    if (body !== undefined) rest.set(body, headBytes.byteLength);
    return { line: encoder.encode(`${request.method} ${path} HTTP/1.1\r\n`), rest };
  }

  /** A response whose body JS reads: through the protocol's reader, completed with the native stamp. */
  private read(id: number, index: number, stampNs: number, body: Buffer, node: number): void {
    const label = this.addresses[node]?.url ?? this.addresses[0]!.url;
    const wantData = wantsResponse(id);
    let outcome;
    try {
      const reader = this.protocol.reader(index, wantData);
      reader.onData(body);
      outcome = reader.onEnd();
    } catch (error) {
      outcome = { ok: false as const, kind: 'malformed_response' as const, message: `the ${this.protocol.kind} reader threw: ${(error as Error)?.message ?? String(error)}` };
    }
    try {
      if (outcome.ok) {
        querySampleComplete(id, wantData ? outcome.data : undefined, outcome.nTokens, stampNs);
      } else {
        this.correctionRecorders[node]?.reclassified(outcome.kind);
        querySampleFailed(id, outcome.kind, this.redact(`node ${label}: ${outcome.message}`), stampNs);
      }
    } catch {
      // No run to complete into any more (a response after the run ended): nothing to record.
    }
  }

  cancelAll(reason: string): void {
    this.handle.cancelAll(reason);
  }

  /** Per-node statistics in lib/net/node-stats.ts's layout (one thread's slices). */
  nodeStats(): Float64Array {
    return this.handle.nodeStats();
  }

  close(): void {
    this.handle.close();
  }

  private redact(text: string): string {
    const key = this.authorization === '' ? '' : this.authorization.slice('authorization: Bearer '.length, -2);
    return key !== '' && text.includes(key) ? text.split(key).join('<api key>') : text;
  }
}
