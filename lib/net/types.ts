/**
 * Public options and results of the network SUTs (docs/network-suts.md).
 */
import type { RunAbortSignal } from '../api/start-test.js';
import type { QuerySampleLibrary, SystemUnderTest } from '../types/api.js';
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
   * of its characters) is ever logged, reported or echoed (docs/network-suts.md, "Secrets
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
  /**
   * Native transport, Server scenario: while it issues a series, the issue
   * thread reads the responses itself as it waits for the next due time (the
   * reactor thread parks until issuing ends), so one thread sends and reads,
   * as a closed-loop client's does, with no wake of a second thread per
   * response. Default true; false: the reactor thread reads every response.
   */
  inlineReactor?: boolean;
  /**
   * Native transport: how many threads read the responses (at most 64 and
   * at most `connections`). Each has its own reactor, its share of each
   * node's connections and no lock shared with the others on its path; the
   * issue thread writes each request on a connection of the one with the
   * fewest requests outstanding. With more than one, no inline reading
   * (inlineReactor): every reactor runs on its own thread. Pays where cores
   * are free beside the issue thread; on a machine whose other cores serve
   * the server, one (inline) is cheapest (docs/network-suts.md).
   * Default 'auto': what `targetQps` needs at 40,000 requests/s a thread
   * (AUTO_REQUESTS_PER_THREAD), up to the cores this process may use less
   * the issue thread's (and the JS thread's when it reads every body);
   * one when no targetQps is given. The summary's block says how it chose.
   */
  clientThreads?: number | 'auto';
  /**
   * The request rate the SUT will be driven at (requests/s: a Server run's
   * target, an Offline run's expected rate), for clientThreads 'auto'. The
   * CLI passes the run's; the API has none unless given (then 'auto' is 1).
   */
  targetQps?: number;
  /**
   * Native transport (Linux): the threads Node started before loadgen's
   * addon was loaded (V8's workers for concurrent GC and background
   * compilation) run at the kernel's idle priority from the moment the
   * transport starts, for the rest of the process (an unprivileged process
   * cannot undo it): on a CPU the issue thread shares, one held the CPU for
   * up to 20 ms while the issue thread waited to send and read (measured:
   * benchmarks/RESULTS.md "Runtime helper threads"); at idle priority it
   * yields the moment the issue thread wakes. The main JS thread, libuv's
   * thread pool (found by a probe: when one of its threads is busy then,
   * nothing is moved), worker threads started later and loadgen's own
   * threads are untouched. Default true; false leaves them as they are.
   */
  idleRuntimeThreads?: boolean;
  /**
   * Native transport (Linux): once it starts, the JS thread that created the
   * SUT runs at this nice value (1..19; 0, the default, leaves it), and
   * loadgen's own threads (the issue thread, the reactors; started from then
   * on by a thread that kept the process's priority) get the kernel's
   * shortest slice (100 µs, Linux >= 6.12): the issue thread then preempts
   * the JS thread the moment it wakes instead of waiting out the JS thread's
   * slice (1.4 ms here). Measured at 10k requests/s with every body read in
   * JS, the client on one CPU: latency p99 0.19-0.48 ms against 0.61-2.7 ms
   * (benchmarks/RESULTS.md, "The JS thread yields"). For the rest of the
   * process (an unprivileged thread cannot raise its priority again), and
   * threads the JS thread starts later inherit it: not for a process whose
   * JS thread must keep its share of a busy CPU. The CLI uses 10 (not with
   * dispatch 'worker').
   */
  jsThreadNice?: number;
  /** Each node's probe (readiness, metadata, name) must answer within this (default: connectTimeoutMs). */
  probeTimeoutMs?: number;
  /**
   * A file to write one JSON line per request to (created, or emptied, when
   * the SUT is created): series, sample id, QSL index, node, when it was sent,
   * its first token and its last byte (ns from its series' start, on the
   * core's clock), input and output tokens, outcome and failure kind
   * (docs/llm-benchmarks.md, "Reports for token runs"). Written after each completion, off
   * the timing path; complete once close() resolves. Not with dispatch
   * 'worker', nor with readEveryResponse false (the native transport would
   * not show every response).
   */
  requestLog?: string;
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

/** `--sut openai`: an OpenAI-compatible endpoint, or SGLang's native /generate (`api: 'sglang'`). */
export interface OpenAiSutOptions extends TransportOptions {
  /** The served model's name (`model` of each request; SGLang: its model path, the path's last part or its served name). */
  model: string;
  /**
   * The data set (docs/llm-benchmarks.md, "Data sets"): JSONL, a JSON array of records
   * (MLPerf's cnn_eval.json) or Parquet; each record's prompt is token ids
   * (`tok_input`), text (`input`, `prompt`) or chat `messages`, with
   * optional max_tokens, min_tokens, ignore_eos, temperature, input_tokens.
   */
  dataset: string;
  /**
   * 'chat' (default): /v1/chat/completions (text and messages);
   * 'completions': /v1/completions (text, or token ids as `prompt: [ids]`);
   * 'sglang': SGLang's POST /generate (`input_ids` or `text`).
   */
  api?: 'chat' | 'completions' | 'sglang';
  /** Default true: `stream: true` (OpenAI with `stream_options.include_usage`). */
  stream?: boolean;
  /** The prompt's field in each record (default: tok_input when present, else input, prompt or messages). */
  promptField?: string;
  /** max_tokens (SGLang max_new_tokens) for records that set none. */
  maxTokens?: number;
  /** min_tokens (SGLang min_new_tokens) for records that set none. */
  minTokens?: number;
  /** ignore_eos for records that set none. */
  ignoreEos?: boolean;
  /** temperature for records that set none (0: greedy, as MLPerf's references). */
  temperature?: number;
  /**
   * A Hugging Face tokenizer.json: counts input and output tokens the
   * server does not, maps logprob tokens to ids, re-encodes output text
   * into ids where the server sends none.
   */
  tokenizer?: string;
  /**
   * What mlperf_log_accuracy.json's data is: 'ids' (the output token ids,
   * little-endian accuracyDtype), 'text' (the output's UTF-8), or 'auto'
   * (default): ids when the prompts are token ids, a tokenizer is given or
   * the API is sglang; text otherwise.
   */
  accuracyData?: 'auto' | 'ids' | 'text';
  /** The ids' width in the accuracy log (default: the benchmark's, see accuracyDtypeFor; int32 for none). */
  accuracyDtype?: 'int32' | 'int64';
  /** The benchmark (mlperf.conf model name, e.g. 'llama3_1-8b'): the accuracyDtype default. */
  benchmark?: string;
  /** Ask for the output ids (`return_token_ids: true`, vLLM >= 0.10.2). Default: when the accuracy data is ids (OpenAI APIs). */
  returnTokenIds?: boolean;
  /** Ask for logprobs (`logprobs: 1`; chat `logprobs: true`), mapped through the tokenizer's vocabulary to ids. Default false. */
  logprobs?: boolean;
  /** Leave reasoning (reasoning_content / reasoning) out of the accuracy data: the final answer only. */
  excludeReasoning?: boolean;
  /** The QSL's performance sample count (default: every sample). */
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
  /** Path or file URL of a module exporting the mapping (docs/network-suts.md, "Any other HTTP API"). */
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
  /** Percentiles of the responses measured (`measured`: how many; all figures 0 when none). */
  latencyNs: { p50: number; p90: number; p99: number; max: number; mean: number; measured: number };
}

export interface NetworkStats {
  protocol: string;
  /** The HTTP client that sent the requests: undici once a run used dispatch workers (each has its own pools). */
  transport: 'native' | 'undici';
  /** A run sent its requests from dispatch worker threads (through their own undici pools). */
  dispatchWorkers: boolean;
  balance: BalancePolicy;
  nodes: NetworkNodeStats[];
  /**
   * The native transport's client threads (clientThreads), since the SUT
   * started: the outcomes each read and its reactor thread's CPU time (the
   * issue thread's inline reading is the issue thread's, not counted here),
   * and its connections: opened, refused (refused, reset or timed out
   * connecting, or closed as accepted), and the requests it sent a second
   * time because their connection closed before any byte of the answer
   * (a keep-alive connection the server had closed: counted once in the
   * node's requests; the server saw both).
   */
  clientThreads?: {
    responses: number;
    reactorCpuMs: number;
    /**
     * Requests the issue thread handed this thread to write (several client threads: each writes its own
     * connections' requests; those that waited for a connection went out as a response freed one, uncounted).
     * Absent with one client thread (the issue thread writes) and in older reports.
     */
    requestsWritten?: number;
    openedConnections: number;
    refusedConnections: number;
    retriedRequests: number;
  }[];
  /** How clientThreads 'auto' chose the count ('' when it was given). */
  clientThreadsNote?: string;
  /** Native transport: the runtime's helper threads at idle priority (idleRuntimeThreads; 0: none, -1: no such policy on this OS). */
  runtimeThreadsIdle?: number;
  /** Why none were moved, when asked and none were ('' otherwise). */
  runtimeThreadsNote?: string;
  /** Native transport with jsThreadNice: the JS thread's nice value now, loadgen's threads' slice (ns; 0: the kernel's own) and what was not done. */
  jsThread?: { nice: number; sliceNs: number; note: string };
}

/** A network SUT with its data set's QSL: `startTest(sut, sut.qsl, settings)`, then `close()`. */
export interface NetworkSut extends SystemUnderTest {
  readonly qsl: QuerySampleLibrary;
  /** Per-node counts and latencies so far. */
  stats(): NetworkStats;
  /** Closes every connection; the SUT cannot be used afterwards. */
  close(): Promise<void>;
}
