/** The transport's settings (kept apart from client.ts so the public declarations need no undici or Node types). */
import type { BalancePolicy } from './types.js';

/** After checking (lib/net/transport.ts). */
export interface ClientConfig {
  balance: BalancePolicy;
  /** Per node; undici opens them as needed up to this many. */
  connections: number;
  /** 0: none. */
  requestTimeoutMs: number;
  connectTimeoutMs: number;
  probeTimeoutMs: number;
  /** 0: probe once; else keep probing a node that is not up for this long. */
  waitForNodesMs: number;
  apiKey: string | undefined;
  http2: boolean;
  transport: 'auto' | 'native' | 'undici';
  readEveryResponse: boolean;
  /** Native transport: the reactor's poll budget limit after each request (0: never poll). */
  responsePollUs: number;
  /** Native transport, Server series: the issue thread reads the responses while it waits for the next due time. */
  inlineReactor: boolean;
  /** Native transport: reactor threads, each with its share of the connections. */
  clientThreads: number;
  /** clientThreads was 'auto' (or not given): chosen from targetQps and the cores (lib/net/client-threads.ts). */
  clientThreadsAuto: boolean;
  /** How 'auto' chose, for the report ('' when the number was given or undici serves). */
  clientThreadsNote: string;
  /** Native transport: the runtime's helper threads at idle priority once it starts. */
  idleRuntimeThreads: boolean;
  /** Native transport: the JS thread's nice value once it starts (0: left alone), loadgen's threads on short slices. */
  jsThreadNice: number;
  /** A node whose connection failed is left out of the rotation this long (unless every node is). */
  backoffMs: number;
}

