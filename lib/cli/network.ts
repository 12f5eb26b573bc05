/**
 * `loadgen run --sut openai|kserve|http`: the network SUTs' options, their
 * checks (all before anything connects: exit 2), and the SUT they build.
 * The API key is read from the environment variable the command line names,
 * never from the command line itself, and is never printed.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';

import { SettingsError } from '../errors.js';
import { createHttpSut } from '../net/http-map.js';
import { createKServeSut } from '../net/kserve.js';
import { ACCURACY_DTYPES } from '../datasets/accuracy-ids.js';
import { ACCURACY_DATA, createOpenAiSut, OPENAI_APIS } from '../net/openai.js';
import { BALANCE_POLICIES, type BalancePolicy, type NetworkSut, type TransportOptions } from '../net/types.js';
import { TRANSPORTS, type TransportChoice } from '../net/native-transport.js';
import { FIELD_BY_NAME } from '../settings/fields.js';
import { echo } from '../settings/messages.js';
import { phase } from './interrupt.js';
import { cliSecrets } from './output-secrets.js';
import { choiceOption, collect, integerInRange, positiveInteger } from './options.js';

export const NETWORK_SUTS = ['openai', 'kserve', 'http'] as const;
export type NetworkSutKind = (typeof NETWORK_SUTS)[number];
/** Where `--sut openai` finds the key when no --api-key-env is given. */
export const DEFAULT_API_KEY_ENV = 'OPENAI_API_KEY';

/** The network options of `loadgen run` (commander's names). */
export interface NetworkCliOptions {
  sut?: string;
  url: string[];
  /** The served model (network SUTs); config lookups otherwise. */
  model?: string;
  configModel?: string;
  dataset?: string;
  api?: string;
  /** false with --no-stream. */
  stream: boolean;
  apiKeyEnv?: string;
  balance?: string;
  connections?: number;
  requestTimeoutMs?: number;
  probeTimeoutMs?: number;
  /** --wait-for-nodes: seconds to keep probing a node that is not up yet. */
  waitForNodes?: number;
  request?: string;
  /** --module-timeout-ms: a `--sut` module's or `--request` module's import (and createSut()/createQsl()). */
  moduleTimeoutMs?: number;
  binaryTensors?: boolean;
  http2?: boolean;
  transport?: string;
  readEveryResponse?: boolean;
  responsePollUs?: number;
  inlineReactor?: boolean;
  clientThreads?: number | 'auto';
  idleRuntimeThreads?: boolean;
  jsThreadNice?: number;
  /** Not a flag: the run's target rate (Server target, Offline expected), for --client-threads auto. */
  targetQps?: number;
  /** openai: the data set's prompt field, generation parameters, tokenizer and accuracy data (lib/net/openai.ts). */
  promptField?: string;
  maxTokens?: number;
  minTokens?: number;
  ignoreEos?: boolean;
  temperature?: number;
  tokenizer?: string;
  accuracyData?: string;
  accuracyDtype?: string;
  /** false with --no-return-token-ids. */
  returnTokenIds?: boolean;
  logprobs?: boolean;
  excludeReasoning?: boolean;
  /** --request-log FILE: one JSON line per request. */
  requestLog?: string;
  mlperfConf?: string;
  userConf?: string;
}

export function isNetworkSut(sut: string | undefined): sut is NetworkSutKind {
  return (NETWORK_SUTS as readonly string[]).includes(sut ?? '');
}

function nonNegativeInteger(name: string): (value: string) => number {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError(`${name} must be an integer >= 0, got '${echo(value)}'.`);
    return Number(value);
  };
}

/** The most ms a timeout option takes (Node's timers: 2^31 - 1). */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A timeout in ms, an integer in min..MAX_TIMEOUT_MS. */
export function timeoutMs(name: string, min: number): (value: string) => number {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > MAX_TIMEOUT_MS)
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${MAX_TIMEOUT_MS} (ms), got '${echo(value)}'.`);
    return Number(value);
  };
}

function temperatureValue(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n > 100) throw new InvalidArgumentError(`--temperature must be a number in 0..100, got '${echo(value)}'.`);
  return n;
}

/** The openai options about data sets, generation and token ids (docs/llm-benchmarks.md, "Data sets", "Token ids and the accuracy log"). */
function addLlmOptions(command: Command): Command {
  return command
    .option('--prompt-field <name>', "openai: the data set's prompt field (default: tok_input when present, else input, prompt or messages)")
    .option('--max-tokens <n>', 'openai: max_tokens (sglang: max_new_tokens) for records that set none', positiveInteger('--max-tokens'))
    .addOption(new Option('--min-tokens <n>', 'openai: min_tokens (sglang: min_new_tokens) for records that set none').argParser(nonNegativeInteger('--min-tokens')))
    .option('--ignore-eos', 'openai: ignore_eos: true for records that set none (generate up to max tokens)')
    .addOption(new Option('--temperature <t>', 'openai: temperature for records that set none (0: greedy)').argParser(temperatureValue))
    .option('--tokenizer <file>', "openai: a Hugging Face tokenizer.json: counts tokens the server does not, maps logprob tokens to ids, re-encodes output text into ids")
    .addOption(choiceOption('--accuracy-data <kind>', 'openai: mlperf_log_accuracy.json data: output token ids, the output text, or auto (ids for token-id prompts, a --tokenizer or --api sglang)', ACCURACY_DATA))
    .addOption(choiceOption('--accuracy-dtype <dtype>', "openai: the token ids' width in the accuracy log (default: the --config-model benchmark's, int32 for none)", ACCURACY_DTYPES))
    .option('--no-return-token-ids', 'openai: do not send return_token_ids (for servers that refuse unknown fields)')
    .option('--logprobs', 'openai: ask for logprobs and map their tokens to ids through --tokenizer')
    .option('--exclude-reasoning', 'openai: leave reasoning text out of the accuracy data (the final answer only)');
}

/** --wait-for-nodes: seconds from 0 up to the longest timer. */
function waitSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(seconds * 1000 <= MAX_TIMEOUT_MS))
    throw new InvalidArgumentError(`--wait-for-nodes must be a number of seconds from 0 to ${Math.floor(MAX_TIMEOUT_MS / 1000)}, got '${echo(value)}'.`);
  return seconds;
}

/** Adds the network options to `loadgen run`. */
export function addNetworkOptions(command: Command): Command {
  return addLlmOptions(command)
    .option('--url <url>', 'network SUT: a node, http://HOST:PORT[/base-path] (repeat for several nodes)', collect, [])
    .option('--config-model <name>', "model name for config-file lookups (<model>.<scenario>.<key>); default: --model")
    .option('--dataset <file>', "network SUT: openai: prompts (JSONL, a JSON array such as MLPerf's cnn_eval.json, or Parquet); kserve: input tensors (.npy or JSONL of v2 inputs)")
    .addOption(choiceOption('--api <name>', "openai: /v1/chat/completions, /v1/completions or SGLang's /generate (default chat)", OPENAI_APIS))
    .option('--no-stream', 'openai: one JSON response per request instead of a token stream')
    .option('--api-key-env <NAME>', `network SUT: the environment variable holding the API key, sent as Authorization: Bearer (openai default: ${DEFAULT_API_KEY_ENV} if set)`)
    .addOption(choiceOption('--balance <policy>', 'network SUT: how queries are spread over the nodes (default least-outstanding)', BALANCE_POLICIES))
    .option('--connections <n>', 'network SUT: most keep-alive connections per node, opened as needed (default 256)', positiveInteger('--connections'))
    .addOption(new Option('--request-timeout-ms <ms>', 'network SUT: a request not finished within this fails as timeout (default 60000; 0: none)').argParser(nonNegativeInteger('--request-timeout-ms')))
    .addOption(new Option('--wait-for-nodes <seconds>', 'network SUT: keep probing a node that refuses connections or answers 503 for up to this long, every 250 ms, before giving up (default 0: probe once; for a server just started)').argParser(waitSeconds))
    .addOption(new Option('--probe-timeout-ms <ms>', "network SUT: each node's probe before the run (readiness, model, name(), the mapping module's check) must answer within this (default 10000)").argParser(timeoutMs('--probe-timeout-ms', 1)))
    .option('--request <module>', 'http: the module mapping samples to requests and responses (docs/network-suts.md: Any other HTTP API)')
    .option('--binary-tensors', 'kserve: the binary tensor data extension instead of JSON tensors')
    .option('--http2', 'network SUT: HTTP/2 where the server offers it (https: nodes, negotiated by ALPN)')
    .addOption(choiceOption('--transport <client>', "network SUT: the HTTP client: native (the core's, plain http: and whole responses), undici (JS; https, HTTP/2, token streams) or auto (default: native where it can)", TRANSPORTS))
    .option('--no-read-every-response', 'network SUT, native transport: check each response\'s status and framing only; the protocol reads a body only where it is logged (no JS per response)')
    .option('--request-log <file>', 'network SUT: write one JSON line per request to FILE (sample id, QSL index, node, sent / first token / last byte in ns from the series start, input and output tokens, outcome)')
    .option('--no-inline-reactor', 'network SUT, native transport, Server: the reactor thread reads every response (default: the issue thread reads them while it waits for the next due time)')
    .addOption(new Option('--js-thread-nice <n>', "network SUT, native transport (Linux): the JS thread's nice value once the transport starts, loadgen's issue and reactor threads on the kernel's shortest slices, so the issue thread preempts the JS thread when it wakes (default 10; 0 leaves both; not with dispatch=worker or --transport undici)").argParser(integerInRange('--js-thread-nice', 0, 19)))
    .option('--no-idle-runtime-threads', "network SUT, native transport: leave Node's own helper threads (V8's GC and compiler workers) at normal priority (default: idle priority once the transport starts, so they yield to the issue thread)")
    .addOption(new Option('--client-threads <n|auto>', "network SUT, native transport: threads that read the responses, each with its share of the connections (default auto: what the run's target rate needs at 40,000 requests/s a thread, up to the cores free beside the issue thread; with one, in Server runs the issue thread reads them inline)").argParser(clientThreadsArg))
    .addOption(new Option('--response-poll-us <us>', 'network SUT, native transport: the reactor polls for each response up to this long (and up to twice the recent median response time) instead of sleeping (default 200; 0: never)').argParser(nonNegativeInteger('--response-poll-us')));
}

/**
 * Refuses network options that do not fit the --sut (before anything runs).
 * `sut` undefined is the built-in demo.
 */
export function checkNetworkOptions(o: NetworkCliOptions): void {
  const sut = o.sut;
  const network = isNetworkSut(sut);
  const what = sut === undefined ? 'the built-in demo (no --sut)' : `--sut ${echo(sut, 60)}`;
  if (!network) {
    const used = [
      o.url.length > 0 ? '--url' : '',
      o.dataset !== undefined ? '--dataset' : '',
      o.api !== undefined ? '--api' : '',
      o.stream === false ? '--no-stream' : '',
      o.apiKeyEnv !== undefined ? '--api-key-env' : '',
      o.balance !== undefined ? '--balance' : '',
      o.connections !== undefined ? '--connections' : '',
      o.requestTimeoutMs !== undefined ? '--request-timeout-ms' : '',
      o.probeTimeoutMs !== undefined ? '--probe-timeout-ms' : '',
      o.waitForNodes !== undefined ? '--wait-for-nodes' : '',
      o.request !== undefined ? '--request' : '',
      o.binaryTensors === true ? '--binary-tensors' : '',
      o.http2 === true ? '--http2' : '',
      o.transport !== undefined ? '--transport' : '',
      o.readEveryResponse === false ? '--no-read-every-response' : '',
      o.responsePollUs !== undefined ? '--response-poll-us' : '',
      o.inlineReactor === false ? '--no-inline-reactor' : '',
      o.clientThreads !== undefined ? '--client-threads' : '',
      o.idleRuntimeThreads === false ? '--no-idle-runtime-threads' : '',
      o.jsThreadNice !== undefined ? '--js-thread-nice' : '',
      ...llmFlagsGiven(o),
      o.requestLog !== undefined ? '--request-log' : '',
    ].filter((s) => s !== '');
    if (used.length > 0)
      throw new SettingsError(used[0]!, undefined, `${used.join(', ')} ${used.length === 1 ? 'applies' : 'apply'} only to a network SUT (--sut ${NETWORK_SUTS.join('|')}), not to ${what}`);
    if (o.moduleTimeoutMs !== undefined && (sut === undefined || sut === 'null' || sut === 'null-native'))
      throw new SettingsError('--module-timeout-ms', o.moduleTimeoutMs, `--module-timeout-ms applies only to a module: --sut ./module.mjs or --sut http --request ./map.mjs, not to ${what}`);
    return;
  }
  if (o.moduleTimeoutMs !== undefined && sut !== 'http')
    throw new SettingsError('--module-timeout-ms', o.moduleTimeoutMs, `--module-timeout-ms applies only to a module: --sut ./module.mjs or --sut http --request ./map.mjs, not to --sut ${sut}`);
  if (o.url.length === 0) throw new SettingsError('--url', undefined, `--sut ${sut} needs --url http://HOST:PORT (repeat it for several nodes)`);
  const only = (flag: string, given: boolean, kinds: readonly NetworkSutKind[]): void => {
    if (given && !kinds.includes(sut)) throw new SettingsError(flag, undefined, `${flag} applies only to --sut ${kinds.join('|')}, not to --sut ${sut}`);
  };
  only('--api', o.api !== undefined, ['openai']);
  for (const flag of llmFlagsGiven(o)) only(flag, true, ['openai']);
  only('--no-stream', o.stream === false, ['openai']);
  only('--binary-tensors', o.binaryTensors === true, ['kserve']);
  only('--request', o.request !== undefined, ['http']);
  only('--dataset', o.dataset !== undefined, ['openai', 'kserve']);
  if (o.model !== undefined && sut === 'http')
    throw new SettingsError('--model', o.model, '--model applies only to --sut openai|kserve (the served model), not to --sut http; for config-file lookups use --config-model');
  if (sut === 'openai' && o.dataset === undefined) throw new SettingsError('--dataset', undefined, "--sut openai needs --dataset FILE (prompts.jsonl: one JSON object a line with prompt or messages; or MLPerf's cnn_eval.json, or Parquet)");
  if ((sut === 'openai' || sut === 'kserve') && o.model === undefined) throw new SettingsError('--model', undefined, `--sut ${sut} needs --model NAME (the model's name on the server)`);
  if (sut === 'http' && o.request === undefined) throw new SettingsError('--request', undefined, '--sut http needs --request ./map.mjs (a module exporting request(index) and totalSampleCount)');
  if (o.apiKeyEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(o.apiKeyEnv))
    throw new SettingsError('--api-key-env', o.apiKeyEnv, `--api-key-env takes the NAME of an environment variable (letters, digits, _), got '${echo(o.apiKeyEnv, 60)}'`);
  if (o.requestLog !== undefined && o.readEveryResponse === false)
    throw new SettingsError('--request-log', o.requestLog,
      '--request-log cannot be combined with --no-read-every-response: the native transport then reads only the responses the accuracy log keeps, so the log would miss requests; drop --no-read-every-response to log every request');
  apiKeyOf(o);  // a named variable that is not set: an error now, not after the probes
}

/** --client-threads: 'auto' or a positive integer. */
function clientThreadsArg(value: string): number | 'auto' {
  if (value === 'auto') return 'auto';
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value)))
    throw new InvalidArgumentError(`--client-threads must be a positive integer or auto, got '${echo(value)}'.`);
  return Number(value);
}

/**
 * The rate a run drives its SUT at, for --client-threads auto: a Server
 * run's target, an Offline run's expected rate; none for the scenarios
 * that keep one query at a time outstanding.
 */
export function runTargetQps(settings: { scenario?: unknown; serverTargetQps?: unknown; offlineExpectedQps?: unknown }): number | undefined {
  const rate = (value: unknown, field: 'serverTargetQps' | 'offlineExpectedQps'): number | undefined => {
    const n = value === undefined ? (FIELD_BY_NAME.get(field)?.default as number | undefined) : Number(value);
    return n !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
  };
  if (settings.scenario === 'Server') return rate(settings.serverTargetQps, 'serverTargetQps');
  if (settings.scenario === 'Offline') return rate(settings.offlineExpectedQps, 'offlineExpectedQps');
  return undefined;
}

// The openai-only options given.
function llmFlagsGiven(o: NetworkCliOptions): string[] {
  return [
    o.promptField !== undefined ? '--prompt-field' : '',
    o.maxTokens !== undefined ? '--max-tokens' : '',
    o.minTokens !== undefined ? '--min-tokens' : '',
    o.ignoreEos === true ? '--ignore-eos' : '',
    o.temperature !== undefined ? '--temperature' : '',
    o.tokenizer !== undefined ? '--tokenizer' : '',
    o.accuracyData !== undefined ? '--accuracy-data' : '',
    o.accuracyDtype !== undefined ? '--accuracy-dtype' : '',
    o.returnTokenIds === false ? '--no-return-token-ids' : '',
    o.logprobs === true ? '--logprobs' : '',
    o.excludeReasoning === true ? '--exclude-reasoning' : '',
  ].filter((s) => s !== '');
}

/**
 * For a network SUT `--model` is the served model: config files are read
 * only with --mlperf-conf/--user-conf/--config-model, looked up under
 * --config-model (default --model). Other SUTs: --config-model is --model.
 */
export function configModelView<T extends NetworkCliOptions>(o: T): T {
  if (!isNetworkSut(o.sut)) return o.configModel !== undefined ? { ...o, model: o.configModel } : o;
  const files = o.mlperfConf !== undefined || o.userConf !== undefined || o.configModel !== undefined;
  const model = files ? (o.configModel ?? o.model) : undefined;
  const view = { ...o };
  if (model === undefined) delete view.model;
  else view.model = model;
  return view;
}

/** The API key from the environment (never from the command line). */
function apiKeyOf(o: NetworkCliOptions): string | undefined {
  if (o.apiKeyEnv !== undefined) {
    const key = process.env[o.apiKeyEnv];
    if (key === undefined || key === '')
      throw new SettingsError('--api-key-env', o.apiKeyEnv, `--api-key-env ${o.apiKeyEnv}: the environment variable ${o.apiKeyEnv} is not set (or empty)`);
    cliSecrets.addApiKey(key);
    return key;
  }
  if (o.sut === 'openai') {
    const key = process.env[DEFAULT_API_KEY_ENV];
    if (key === undefined || key === '') return undefined;
    cliSecrets.addApiKey(key);
    return key;
  }
  return undefined;
}

/**
 * Builds the network SUT the options describe (reading its data set or
 * mapping module, probing every node). `signal` stops its requests, and
 * aborted it ends the wait at once (rejecting with its reason) in any of
 * these steps.
 */
export function createCliNetworkSut(o: NetworkCliOptions, signal: AbortSignal): Promise<NetworkSut> {
  return phase(signal, buildCliNetworkSut(o, signal));
}

async function buildCliNetworkSut(o: NetworkCliOptions, signal: AbortSignal): Promise<NetworkSut> {
  const apiKey = apiKeyOf(o);
  const transport: TransportOptions = {
    urls: o.url,
    ...(o.balance !== undefined ? { balance: o.balance as BalancePolicy } : {}),
    ...(o.connections !== undefined ? { connections: o.connections } : {}),
    ...(o.requestTimeoutMs !== undefined ? { requestTimeoutMs: o.requestTimeoutMs } : {}),
    ...(o.probeTimeoutMs !== undefined ? { probeTimeoutMs: o.probeTimeoutMs } : {}),
    ...(o.waitForNodes !== undefined ? { waitForNodesMs: Math.round(o.waitForNodes * 1000) } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(o.http2 === true ? { http2: true } : {}),
    ...(o.transport !== undefined ? { transport: o.transport as TransportChoice } : {}),
    ...(o.readEveryResponse === false ? { readEveryResponse: false } : {}),
    ...(o.responsePollUs !== undefined ? { responsePollUs: o.responsePollUs } : {}),
    ...(o.inlineReactor === false ? { inlineReactor: false } : {}),
    ...(o.clientThreads !== undefined ? { clientThreads: o.clientThreads } : {}),
    ...(o.targetQps !== undefined ? { targetQps: o.targetQps } : {}),
    ...(o.idleRuntimeThreads === false ? { idleRuntimeThreads: false } : {}),
    ...(o.jsThreadNice !== undefined && o.jsThreadNice > 0 ? { jsThreadNice: o.jsThreadNice } : {}),
    ...(o.requestLog !== undefined ? { requestLog: o.requestLog } : {}),
    signal,
  };
  switch (o.sut) {
    case 'openai':
      return createOpenAiSut({
        ...transport,
        model: o.model!,
        dataset: o.dataset!,
        ...(o.api !== undefined ? { api: o.api as 'chat' | 'completions' | 'sglang' } : {}),
        stream: o.stream,
        ...(o.promptField !== undefined ? { promptField: o.promptField } : {}),
        ...(o.maxTokens !== undefined ? { maxTokens: o.maxTokens } : {}),
        ...(o.minTokens !== undefined ? { minTokens: o.minTokens } : {}),
        ...(o.ignoreEos === true ? { ignoreEos: true } : {}),
        ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
        ...(o.tokenizer !== undefined ? { tokenizer: o.tokenizer } : {}),
        ...(o.accuracyData !== undefined ? { accuracyData: o.accuracyData as 'auto' | 'ids' | 'text' } : {}),
        ...(o.accuracyDtype !== undefined ? { accuracyDtype: o.accuracyDtype as 'int32' | 'int64' } : {}),
        ...(o.configModel !== undefined ? { benchmark: o.configModel } : {}),
        ...(o.returnTokenIds === false ? { returnTokenIds: false } : {}),
        ...(o.logprobs === true ? { logprobs: true } : {}),
        ...(o.excludeReasoning === true ? { excludeReasoning: true } : {}),
      });
    case 'kserve':
      return createKServeSut({
        ...transport,
        model: o.model!,
        ...(o.dataset !== undefined ? { dataset: o.dataset } : {}),
        ...(o.binaryTensors === true ? { binaryTensors: true } : {}),
      });
    case 'http':
      return createHttpSut({ ...transport, request: o.request!, ...(o.moduleTimeoutMs !== undefined ? { moduleTimeoutMs: o.moduleTimeoutMs } : {}) });
    default:
      throw new SettingsError('--sut', o.sut, `--sut ${echo(String(o.sut), 60)} is not a network SUT`);
  }
}
