/**
 * createNetworkSut: a SystemUnderTest that sends each sample over HTTP to
 * one of several nodes (the Network division's Query Dispatch Library).
 * The protocol (lib/net/openai, kserve, http-map) says what to send and how
 * to read the answer; lib/net/client.ts does the sending.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { yieldToEventLoop } from '../abortable.js';
import type { QuerySample, QuerySampleLibrary } from '../types/api.js';
import { DISPATCH_WORKER_PLAN, type DispatchWorkerPlan } from '../dispatch/dispatch.js';
import { InterfaceError, SettingsError } from '../errors.js';
import { loadNative, packageRoot } from '../native/index.js';
import type { ClientConfig } from './client-config.js';
import { autoClientThreads } from './client-threads.js';
import { NetworkClient } from './client.js';
import { NativeTransport, nativeTransportObstacle, TRANSPORTS } from './native-transport.js';
import { NATIVE_SUT } from '../api/native-sut.js';
import { cleanNodeName, networkSutName, parseNodeUrls, uniqueNodeNames, type NodeAddress } from './nodes.js';
import { createStatsBuffer, nodeSlice, summarizeNode } from './node-stats.js';
import { DEFAULT_MAX_RESPONSE_BYTES, type NetworkProtocol } from './protocol.js';
import { networkReport } from './report.js';
import { RequestLog } from './request-log.js';
import { secretsOf } from './secrets.js';
import { createStreamStatsBuffer, streamReport, streamSlice } from './stream-stats.js';
import { isRegisteredProtocol, type NetworkWorkerOptions } from './worker-options.js';
import { BALANCE_POLICIES, type NetworkStats, type NetworkSut, type TransportOptions } from './types.js';

/** Keep-alive connections per node when `connections` is not given: opened as needed, up to this many. */
export const DEFAULT_CONNECTIONS = 256;
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** How long a node whose connection failed stays out of the rotation. */
export const NODE_BACKOFF_MS = 1_000;
/** The native reactor polls for a response this long at most (TransportOptions.responsePollUs). */
export const DEFAULT_RESPONSE_POLL_US = 200;
const MAX_RESPONSE_POLL_US = 1_000_000;
/**
 * Most connections per node: each is a file descriptor and ~2 KB of client
 * state besides the kernel's buffers (the native transport also checks the
 * process's open-file limit when it starts).
 */
export const MAX_CONNECTIONS = 4096;
/** The JS thread's nice value `loadgen run` asks for (jsThreadNice; --js-thread-nice): a run's process exists for the run. */
export const CLI_JS_THREAD_NICE = 10;
/** Longest timeout in ms: the longest JS timer (setTimeout's limit). */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The options checked, defaults filled in (bad values: SettingsError naming the option). */
export function checkTransportOptions(options: TransportOptions, cores: number = availableParallelism()): ClientConfig {
  if (typeof options !== 'object' || options === null) throw new SettingsError('options', options, `network SUT options must be an object, got ${options === null ? 'null' : typeof options}`);
  const balance = options.balance ?? 'least-outstanding';
  if (!BALANCE_POLICIES.includes(balance))
    throw new SettingsError('balance', balance, `balance '${String(balance)}' is not one of ${BALANCE_POLICIES.join(', ')}`);
  const connections = integerOption('connections', options.connections, DEFAULT_CONNECTIONS, 1, MAX_CONNECTIONS);
  const requestTimeoutMs = integerOption('requestTimeoutMs', options.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS, 0, MAX_TIMEOUT_MS);
  const connectTimeoutMs = integerOption('connectTimeoutMs', options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
  const probeTimeoutMs = integerOption('probeTimeoutMs', options.probeTimeoutMs, Math.max(connectTimeoutMs, 1), 1, MAX_TIMEOUT_MS);
  const waitForNodesMs = integerOption('waitForNodesMs', options.waitForNodesMs, 0, 0, MAX_TIMEOUT_MS);
  if (options.apiKey !== undefined && (typeof options.apiKey !== 'string' || /[\r\n\0]/.test(options.apiKey)))
    // The value is never echoed: it is a secret.
    throw new SettingsError('apiKey', '<hidden>', 'apiKey must be a string without line breaks or NUL (its value is not shown)');
  if (options.http2 !== undefined && typeof options.http2 !== 'boolean')
    throw new SettingsError('http2', options.http2, `http2 must be true or false, got ${typeof options.http2}`);
  const transport = options.transport ?? 'auto';
  if (!TRANSPORTS.includes(transport))
    throw new SettingsError('transport', transport, `transport '${String(transport)}' is not one of ${TRANSPORTS.join(', ')}`);
  if (options.readEveryResponse !== undefined && typeof options.readEveryResponse !== 'boolean')
    throw new SettingsError('readEveryResponse', options.readEveryResponse, `readEveryResponse must be true or false, got ${typeof options.readEveryResponse}`);
  if (options.inlineReactor !== undefined && typeof options.inlineReactor !== 'boolean')
    throw new SettingsError('inlineReactor', options.inlineReactor, `inlineReactor must be true or false, got ${typeof options.inlineReactor}`);
  if (options.idleRuntimeThreads !== undefined && typeof options.idleRuntimeThreads !== 'boolean')
    throw new SettingsError('idleRuntimeThreads', options.idleRuntimeThreads, `idleRuntimeThreads must be true or false, got ${typeof options.idleRuntimeThreads}`);
  const maxClientThreads = loadNative().tables.maxClientThreads;
  if (options.targetQps !== undefined && (typeof options.targetQps !== 'number' || !Number.isFinite(options.targetQps) || options.targetQps <= 0))
    throw new SettingsError('targetQps', options.targetQps, `targetQps must be a finite number > 0 (requests/s), got ${typeof options.targetQps === 'number' ? options.targetQps : typeof options.targetQps}`);
  const readEveryResponse = options.readEveryResponse !== false;
  const autoThreads = options.clientThreads === undefined || options.clientThreads === 'auto';
  // 'auto' and undici: undici's pools have no client threads (nothing to choose, nothing to say).
  const threadsChoice = !autoThreads
    ? { threads: integerOption('clientThreads', options.clientThreads, 1, 1, maxClientThreads, "or 'auto'"), note: '' }
    : options.transport === 'undici'
      ? { threads: 1, note: '' }
      : autoClientThreads({ targetQps: options.targetQps, cores, jsReadsBodies: readEveryResponse, connections, max: maxClientThreads });
  const clientThreads = threadsChoice.threads;
  if (clientThreads > connections)
    throw new SettingsError('clientThreads', clientThreads,
      `clientThreads ${clientThreads} exceeds connections ${connections}: each client thread owns at least one connection per node; raise connections or lower clientThreads`);
  if (clientThreads > 1 && options.transport === 'undici')
    throw new SettingsError('clientThreads', clientThreads, `clientThreads ${clientThreads} needs the native transport (transport 'native' or 'auto'), not 'undici'`);
  const jsThreadNice = integerOption('jsThreadNice', options.jsThreadNice, 0, 0, 19);
  if (jsThreadNice > 0 && options.transport === 'undici')
    throw new SettingsError('jsThreadNice', jsThreadNice, `jsThreadNice ${jsThreadNice} applies to the native transport (transport 'native' or 'auto'), not 'undici': undici reads the responses on the JS thread itself`);
  const responsePollUs = integerOption('responsePollUs', options.responsePollUs, DEFAULT_RESPONSE_POLL_US, 0, MAX_RESPONSE_POLL_US);
  if (options.requestLog !== undefined) {
    if (typeof options.requestLog !== 'string' || options.requestLog === '' || options.requestLog.includes('\0'))
      throw new SettingsError('requestLog', options.requestLog, `requestLog must be a file path (a non-empty string without NUL), got ${typeof options.requestLog === 'string' ? "''" : typeof options.requestLog}`);
    if (options.readEveryResponse === false)
      throw new SettingsError('readEveryResponse', false,
        'readEveryResponse false cannot be combined with requestLog: the native transport then reads only the responses the accuracy log keeps, so the log would miss requests; leave readEveryResponse on (the default) to log every request');
  }
  return {
    balance,
    connections,
    requestTimeoutMs,
    connectTimeoutMs,
    probeTimeoutMs,
    waitForNodesMs,
    apiKey: options.apiKey === '' ? undefined : options.apiKey,
    http2: options.http2 === true,
    transport,
    readEveryResponse,
    responsePollUs,
    inlineReactor: options.inlineReactor !== false,
    clientThreads,
    clientThreadsAuto: autoThreads,
    clientThreadsNote: threadsChoice.note,
    idleRuntimeThreads: options.idleRuntimeThreads !== false,
    jsThreadNice,
    backoffMs: NODE_BACKOFF_MS,
  };
}

function integerOption(name: string, value: unknown, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER, alternative = ''): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    throw new SettingsError(name, value, `${name} must be an integer >= ${min}${alternative !== '' ? ` ${alternative}` : ''}, got ${typeof value === 'number' ? value : typeof value === 'string' ? `'${value.slice(0, 40)}'` : typeof value}`);
  if (value > max) throw new SettingsError(name, value, `${name} must be at most ${max}, got ${value}`);
  return value;
}

/**
 * Probes every node (readiness, model, its name: at least one round trip
 * each), then serves queries over undici pools. A node that is down, not
 * ready or without the model is a NetworkSetupError naming its URL; nothing
 * is left open then.
 */
export async function createNetworkSut(protocol: NetworkProtocol, options: TransportOptions): Promise<NetworkSut> {
  const config = checkTransportOptions(options);
  const addresses = parseNodeUrls(options.urls);
  const stats = createStatsBuffer(addresses.length, 1, false);
  // This thread's stream figures: the undici client's slice, then the native transport's.
  const streams = createStreamStatsBuffer(2, false);
  // Created now: a path that cannot be written is bad input before any node is contacted.
  const secretsForLog = secretsOf(protocol, config.apiKey);
  const requestLog = options.requestLog !== undefined ? new RequestLog(options.requestLog, addresses.map((a) => a.url), (t) => secretsForLog.redact(t)) : undefined;
  const client = new NetworkClient(protocol, addresses, config, addresses.map((_, i) => nodeSlice(stats, addresses.length, 0, i)), undefined,
    { streamSlice: streamSlice(streams, 0), ...(requestLog !== undefined ? { requestLog } : {}) });
  let names: string[];
  try {
    // The SUT's signal (the CLI's Ctrl-C) ends the probes and the check before the run too.
    const stop = options.signal instanceof AbortSignal ? options.signal : undefined;
    names = await client.probeAll(stop);
    await protocol.checkBeforeRun?.(client.nodeProbe(0, stop, protocol.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES));
    if (stop?.aborted === true) throw stop.reason;
  } catch (error) {
    await client.close();
    requestLog?.closeNow();
    throw error;
  }
  const nodeNames = uniqueNodeNames(
    // A node that echoes a secret back (even part of it) must not put it into the logs' SUT name.
    names.map((n, i) => cleanNodeName(typeof n === 'string' ? client.redact(n) : n, addresses[i]!.url)),
    addresses,
  );
  let native: NativeTransport | undefined;
  try {
    native = await startNativeTransport(protocol, addresses, config, streamSlice(streams, 1), requestLog);
  } catch (error) {
    await client.close();
    requestLog?.closeNow();
    throw error;
  }
  return buildNetworkSut(protocol, client, addresses, nodeNames, config, { stats, streams }, options, native, requestLog);
}

/** The native transport when `transport` asks for it or ('auto') it can serve the SUT; its connections open. */
async function startNativeTransport(
  protocol: NetworkProtocol,
  addresses: readonly NodeAddress[],
  config: ClientConfig,
  streamStats: Float64Array,
  requestLog: RequestLog | undefined,
): Promise<NativeTransport | undefined> {
  if (config.transport === 'undici') return undefined;
  const obstacle = nativeTransportObstacle(protocol, addresses, config);
  if (obstacle !== '') {
    // 'auto' asks for no transport in particular: undici serves the SUT then.
    if (config.clientThreads > 1 && !config.clientThreadsAuto)
      throw new SettingsError('clientThreads', config.clientThreads, `clientThreads ${config.clientThreads} needs the native transport, which cannot serve this SUT: ${obstacle}`);
    if (config.transport === 'auto') return undefined;
    throw new SettingsError('transport', 'native', `transport 'native' cannot serve this SUT: ${obstacle}; use 'undici' or 'auto'`);
  }
  const native = new NativeTransport(protocol, addresses, config, config.readEveryResponse, secretsOf(protocol, config.apiKey), streamStats, requestLog);
  try {
    await native.start();
  } catch (error) {
    native.close();
    throw error;
  }
  return native;
}

/** The compiled worker module of the network SUTs (dispatch 'worker'). */
export const NETWORK_WORKER_MODULE: string = pathToFileURL(resolve(packageRoot, 'dist', 'net', 'worker-sut.js')).href;

function buildNetworkSut(
  protocol: NetworkProtocol,
  client: NetworkClient,
  addresses: readonly NodeAddress[],
  nodeNames: readonly string[],
  config: ClientConfig,
  buffers: { stats: Float64Array; streams: Float64Array },
  options: TransportOptions,
  native: NativeTransport | undefined,
  requestLog: RequestLog | undefined,
): NetworkSut {
  const { stats, streams } = buffers;
  const signal = options.signal;
  // Every thread's statistics: this thread's, then each worker run's (shared).
  const statsBuffers: Float64Array[] = [stats];
  const streamBuffers: Float64Array[] = [streams];
  // A run with dispatch workers sends through their undici pools, not the
  // native client (startTest hands the core no native SUT then).
  let workerRuns = false;
  const cancelled = new Int32Array(new SharedArrayBuffer(4));
  const secrets = client.secrets;
  // Building the requests of a large load takes long: it is done in slices
  // between which a signal is handled, and it stops once the run is stopped.
  const stopped = (): boolean => Atomics.load(cancelled, 0) !== 0;
  const qsl: QuerySampleLibrary = {
    name: `${protocol.kind} data set (${protocol.totalSampleCount} samples)`,
    totalSampleCount: protocol.totalSampleCount,
    performanceSampleCount: protocol.performanceSampleCount,
    loadSamplesToRam: async (indices) => {
      try {
        if (native !== undefined) await native.load(indices, stopped);
        else await loadInSlices(indices, (slice) => protocol.load(slice), stopped);
      } catch (error) {
        // A protocol's (or a mapping module's) error text goes to the logs and stderr.
        throw secrets.redactError(error);
      }
    },
    unloadSamplesFromRam: async (indices) => {
      try {
        await (native !== undefined ? native.unload(indices) : protocol.unload(indices));
      } catch (error) {
        throw secrets.redactError(error);
      }
    },
  };
  const onAbort = (): void => {
    Atomics.store(cancelled, 0, 1);
    const reason = `the run was stopped (${abortText(signal?.reason)})`;
    client.cancelAll(reason);
    native?.cancelAll(reason);
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted === true) onAbort();
  const networkStats = (): NetworkStats => {
    // The native client's counts are its own (one slice per node), read when asked.
    const buffers = native !== undefined ? [...statsBuffers, native.nodeStats(), native.corrections] : statsBuffers;
    return {
      protocol: protocol.kind,
      transport: native !== undefined && !workerRuns ? 'native' : 'undici',
      dispatchWorkers: workerRuns,
      balance: config.balance,
      nodes: addresses.map((a, i) => summarizeNode(buffers, addresses.length, i, a.url, nodeNames[i]!)),
      ...(native !== undefined && !workerRuns ? {
        clientThreads: native.threadCounts(), clientThreadsNote: config.clientThreadsNote, runtimeThreadsIdle: native.runtimeThreadsIdle, runtimeThreadsNote: native.runtimeThreadsNote,
        ...(native.jsThread !== undefined ? { jsThread: native.jsThread } : {}),
      } : {}),
    };
  };
  const plan: DispatchWorkerPlan = {
    module: NETWORK_WORKER_MODULE,
    options: (workerCount: number): NetworkWorkerOptions => {
      // Called before the run starts anything: a transport the workers cannot use is bad input.
      if (config.transport === 'native')
        throw new SettingsError('transport', 'native', "transport 'native' cannot serve dispatch 'worker': dispatch workers send through their own undici pools; use transport 'auto' or 'undici' with dispatch 'worker', or another dispatch mode ('wake', 'poll') with 'native'");
      if (requestLog !== undefined)
        throw new SettingsError('requestLog', requestLog.path, "requestLog cannot be used with dispatch 'worker': the log is written from the thread that reads the responses; use dispatch 'wake' or 'poll' (the default is 'wake')");
      if (!isRegisteredProtocol(protocol.kind))
        throw new InterfaceError(`dispatch 'worker': the network SUT's protocol '${protocol.kind}' cannot be re-created in worker threads (only openai, kserve and http can)`);
      const shared = createStatsBuffer(addresses.length, workerCount, true);
      statsBuffers.push(shared);
      const sharedStreams = createStreamStatsBuffer(workerCount, true);
      streamBuffers.push(sharedStreams);
      workerRuns = true;
      const { signal: _signal, ...protocolOptions } = options as TransportOptions & Record<string, unknown>;
      void _signal;
      return { kind: protocol.kind, protocolOptions, addresses: [...addresses], config, stats: shared, streams: sharedStreams, cancelled };
    },
  };
  const sut: NetworkSut & { report(): ReturnType<typeof networkReport> } = {
    name: networkSutName(protocol.kind, nodeNames),
    // A protocol that streams tokens is measured with token latencies (TTFT, TPOT) unless told otherwise.
    // The dispatch mode stays the run's default ('wake'): interleaved on loopback, 'poll' was
    // no faster and cost a core at low rates, 'worker' slower (benchmarks/RESULTS.md, issue 12).
    ...(protocol.streamsTokens ? { defaultSettings: { useTokenLatencies: true } } : {}),
    qsl,
    issueQuery: (samples: QuerySample[]) => {
      try {
        client.issue(samples);
      } catch (error) {
        throw secrets.redactError(error);
      }
    },
    stats: networkStats,
    // The block after the summary, report.html's table and result.sutReport.
    report: () => networkReport(networkStats(), protocol.describe?.(), protocol.accuracyDataNote?.(), streamReport(streamBuffers, protocol.streamsTokens), requestLog?.summary()),
    close: async () => {
      signal?.removeEventListener('abort', onAbort);
      native?.close();
      await client.close();
      await requestLog?.close();
    },
  };
  Object.defineProperty(sut, DISPATCH_WORKER_PLAN, { value: plan });
  // startTest hands the core the native client: it issues to it from the issue thread (not with dispatch workers).
  if (native !== undefined) Object.defineProperty(sut, NATIVE_SUT, { value: native.handle });
  return sut;
}

/** Slices of a load: the clock is read after each, and the event loop runs every {@link LOAD_SLICE_MS}. */
export const LOAD_SLICE_SAMPLES = 256;
export const LOAD_SLICE_MS = 10;

/**
 * Hands `indices` to `load` in slices, letting the event loop run (signals,
 * timers) at least every LOAD_SLICE_MS; returns early once `stopped()`.
 * False when it stopped before the last slice.
 */
export async function loadInSlices(
  indices: readonly number[],
  load: (slice: number[]) => void | Promise<void>,
  stopped: () => boolean,
): Promise<boolean> {
  let since = performance.now();
  for (let at = 0; at < indices.length; at += LOAD_SLICE_SAMPLES) {
    if (stopped()) return false;
    await load(indices.slice(at, at + LOAD_SLICE_SAMPLES));
    if (performance.now() - since >= LOAD_SLICE_MS) {
      await yieldToEventLoop();
      since = performance.now();
    }
  }
  return !stopped();
}

function abortText(reason: unknown): string {
  return reason instanceof Error ? reason.message : reason === undefined ? 'aborted' : String(reason);
}

