/**
 * Public options and results of the network SUTs (README "Network SUTs").
 */
import type { RunAbortSignal } from '../api/start-test.js';
import type { QuerySampleLibrary, SystemUnderTest } from '../api/types.js';
import type { FailureKind } from './protocol.js';

export const BALANCE_POLICIES = ['round-robin', 'least-outstanding'] as const;
export type BalancePolicy = (typeof BALANCE_POLICIES)[number];

/** What every network SUT takes: the nodes and how to talk to them. */
export interface TransportOptions {
  /** One URL per node, e.g. ['http://127.0.0.1:8000']; http: or https:. */
  urls: readonly string[];
  /** How queries are spread over the nodes (default 'least-outstanding'). */
  balance?: BalancePolicy;
  /** Keep-alive connections per node, opened as the rate needs them up to this (default 256; 1 to 4096). */
  connections?: number;
  /**
   * A request not finished within this of being written to its connection
   * is failed as 'timeout' (default 60000; 0: none; at most 2147483647). Time
   * spent waiting for a connection does not count.
   */
  requestTimeoutMs?: number;
  /** Connecting a socket (default 10000; 1 to 2147483647). */
  connectTimeoutMs?: number;
  /**
   * Sent as `Authorization: Bearer <key>`; no part of it (no run of 8 or more
   * of its characters) is ever logged, reported or echoed (README "Secrets
   * never written").
   */
  apiKey?: string;
  /** HTTP/2 instead of HTTP/1.1 keep-alive. */
  http2?: boolean;
  /**
   * Which HTTP client sends the requests. 'native' (the core's own HTTP/1.1
   * client: the issue thread writes each request, a native thread reads and
   * stamps the response; no JS on the way) serves plain http: nodes whose
   * responses are read whole (KServe, mapped HTTP APIs); 'undici' (on the JS
   * thread) serves everything, including https, HTTP/2 and streamed tokens.
   * 'auto' (default): native where it can serve the SUT.
   */
  transport?: 'auto' | 'native' | 'undici';
  /**
   * Native transport: the protocol reads every response body on the JS
   * thread, after the native stamp (so never inside a latency), and a
   * malformed one fails its sample (default true). false: each response's
   * status and framing are checked natively and a body is read only where
   * it is logged (accuracy mode, sampled accuracy-log entries): no JS per
   * response, the highest rates. No effect with an `apiKey` or secret request
   * headers: every response then reaches JS, so that each failure message
   * is redacted.
   */
  readEveryResponse?: boolean;
  /**
   * Native transport: after each request the reactor thread polls for its
   * response instead of sleeping, so it is awake when the response lands
   * (waking a halted CPU costs ~25-50 µs on a VM) — for at most this many
   * µs and at most twice the recent median response time, and not at all
   * while that median exceeds half of it (a slow server: the poll would burn
   * CPU for a wake-up small beside its response time). Default 200; 0: never
   * poll (the least CPU). At most 1,000,000.
   */
  responsePollUs?: number;
  /** Each node's probe (readiness, metadata, name) must answer within this (default: connectTimeoutMs). */
  probeTimeoutMs?: number;
  /**
   * How long to keep probing a node that is not up yet (default 0: probe
   * once): a node that cannot be connected to, or answers 503 Service
   * Unavailable, is probed again every 250 ms until it answers or this
   * many ms have passed (then a NetworkSetupError naming its URL and the
   * wait). For a server started just before the run (`loadgen serve &`).
   */
  waitForNodesMs?: number;
  /**
   * Stops the SUT's requests when aborted (e.g. startTest's signal): every
   * request in flight, and every later one, fails at once as 'cancelled'.
   */
  signal?: RunAbortSignal;
}

/** `--sut openai`: an OpenAI-compatible endpoint. */
export interface OpenAiSutOptions extends TransportOptions {
  /** The served model's name (`model` of each request). */
  model: string;
  /** JSONL file: one sample a line ({ prompt } or { messages }, optional max_tokens, input_tokens). */
  dataset: string;
  /** 'chat' (default): /v1/chat/completions; 'completions': /v1/completions. */
  api?: 'chat' | 'completions';
  /** Default true: `stream: true` with `stream_options.include_usage`. */
  stream?: boolean;
  /** max_tokens for samples whose line has none. */
  maxTokens?: number;
  /** The QSL's performance sample count (default: every line). */
  performanceSampleCount?: number;
}

/** `--sut kserve`: a KServe v2 / Open Inference Protocol server. */
export interface KServeSutOptions extends TransportOptions {
  /** The model's name on the server. */
  model: string;
  /** Input tensors (.npy or JSONL of v2 `inputs`); absent with model 'demo-cnn': the built-in demo data. */
  dataset?: string;
  /** The binary tensor data extension instead of JSON tensors. */
  binaryTensors?: boolean;
  performanceSampleCount?: number;
  /**
   * The input names and shapes the model's metadata fixed, one list per
   * input layout of the data set. createKServeSut fills it in once the nodes
   * are probed, so dispatch workers (which do not probe) build the same
   * requests; leave it unset.
   */
  resolvedInputs?: readonly (readonly { name: string; shape: readonly number[] }[])[];
}

/** `--sut http`: any HTTP API, mapped by a user module. */
export interface HttpSutOptions extends TransportOptions {
  /** Path or file URL of a module exporting the mapping (README "Any other HTTP API"). */
  request: string;
  /** Importing the module (its top-level await) must settle within this (ms; default 30000; 0: no limit). */
  moduleTimeoutMs?: number;
}

/** One node as the run saw it. */
export interface NetworkNodeStats {
  /** The URL's origin (no credentials). */
  origin: string;
  /** The name the node gave over the network. */
  name: string;
  requests: number;
  completed: number;
  failed: Record<FailureKind, number>;
  /** Request sent -> response read, as the client saw it, in ns. */
  latencyNs: { p50: number; p90: number; p99: number; max: number; mean: number };
}

export interface NetworkStats {
  protocol: string;
  /** The HTTP client that sent the requests: undici once a run used dispatch workers (each has its own pools). */
  transport: 'native' | 'undici';
  /** A run sent its requests from dispatch worker threads (through their own undici pools). */
  dispatchWorkers: boolean;
  balance: BalancePolicy;
  nodes: NetworkNodeStats[];
}

/** A network SUT with its data set's QSL: `startTest(sut, sut.qsl, settings)`, then `close()`. */
export interface NetworkSut extends SystemUnderTest {
  readonly qsl: QuerySampleLibrary;
  /** Per-node counts and latencies so far. */
  stats(): NetworkStats;
  /** Closes every connection; the SUT cannot be used afterwards. */
  close(): Promise<void>;
}
