/**
 * The OpenAI-compatible protocol (`--sut openai`): a data set (JSONL, a JSON
 * array such as MLPerf's cnn_eval.json, or Parquet: lib/datasets) of
 * token-id prompts, text prompts or chat messages, sent to
 * /v1/chat/completions, /v1/completions (token ids as `prompt: [ids]`) or
 * SGLang's /generate (`input_ids`); one streamed (SSE) or whole response per
 * sample. The first output token's bytes are handed to the transport to
 * stamp; the counts and the accuracy data (output token ids or text) come
 * from the best source each response has (lib/net/llm/output.ts).
 */
import { readDataset } from '../datasets/read.js';
import type { DatasetSample } from '../datasets/types.js';
import { ACCURACY_DTYPES, accuracyDtypeFor, type AccuracyDtype } from '../datasets/accuracy-ids.js';
import { NetworkSetupError, SettingsError } from '../errors.js';
import { echo } from '../settings/messages.js';
import { excerpt, OpenAiStreamReader, OpenAiWholeReader } from './llm/openai-readers.js';
import type { KnownInputTokens, OutputConfig } from './llm/output.js';
import { API_PATHS, LLM_APIS, probeBody, requestBody, type LlmApi, type RequestConfig } from './llm/requests.js';
import { probeSglangNode, SglangStreamReader, SglangWholeReader } from './llm/sglang.js';
import { loadLlmTokenizer } from './llm/load-tokenizer.js';
import type { RunAbortSignal } from '../run-abort-signal.js';
import type { LlmTokenizer } from './llm/tokenizer-port.js';
import * as S from './llm/token-sources.js';
import type { NetworkProtocol, NodeProbe, PreparedRequest } from './protocol.js';
import { createNetworkSut } from './transport.js';
import type { NetworkSut, OpenAiSutOptions } from './types.js';

/** The APIs `--api` names. */
export const OPENAI_APIS = LLM_APIS;
export type OpenAiApi = LlmApi;

/** Largest `max_tokens` a data set line or option may ask for. */
export const OPENAI_MAX_TOKENS_LIMIT = 2 ** 31 - 1;
/** The accuracy data choices (OpenAiSutOptions.accuracyData). */
export const ACCURACY_DATA = ['auto', 'ids', 'text'] as const;
// Model ids listed in the error for a model a node does not serve.
const MODELS_LISTED = 10;

/** createOpenAiSut's options as the protocol reads them (the shared counters are internal). */
interface OpenAiProtocolOptions extends OpenAiSutOptions {
  tokenSourceCounts?: Int32Array;
}

/** Why a prompt kind cannot be sent on an API (the end of the data set's error). */
function refusals(api: OpenAiApi): { ids?: string; messages?: string } {
  if (api === 'chat') return { ids: 'token ids cannot be sent to --api chat (it takes text); use --api completions or --api sglang, or --prompt-field input for the text' };
  if (api === 'completions') return { messages: 'is for --api chat; --api completions takes "prompt" (a string) or token ids' };
  return { messages: 'is for --api chat; --api sglang takes token ids or a text prompt' };
}

/**
 * Reads and checks an OpenAI data set for `api` (lib/datasets: JSONL, JSON
 * array or Parquet). The first bad record is a DatasetError naming file,
 * line or row, and field.
 */
export async function readOpenAiDataset(file: string, api: OpenAiApi, options: { promptField?: string; tokenIdLimit?: number; signal?: RunAbortSignal } = {}): Promise<DatasetSample[]> {
  const dataset = await readDataset(file, { refuse: refusals(api), ...options });
  return dataset.samples as DatasetSample[];
}

interface OpenAiConfig extends RequestConfig {
  dataset: string;
  promptField: string | undefined;
  tokenizer: string | undefined;
  accuracyData: (typeof ACCURACY_DATA)[number];
  accuracyDtype: AccuracyDtype;
  excludeReasoning: boolean;
  returnTokenIdsOption: boolean | undefined;
}

function checkOptions(options: OpenAiSutOptions): OpenAiConfig {
  if (typeof options !== 'object' || options === null) throw new SettingsError('options', options, `openai: options must be an object, got ${options === null ? 'null' : typeof options}`);
  const { model, dataset, api = 'chat', stream = true, maxTokens, minTokens, ignoreEos, temperature, promptField, tokenizer, accuracyData = 'auto', benchmark } = options;
  if (typeof model !== 'string' || model.length === 0 || /[\u0000-\u001f\u007f]/.test(model)) {
    throw new SettingsError('model', model, `openai: model must be a non-empty printable string (the served model's name), got ${typeof model === 'string' ? `'${echo(model)}'` : typeof model}`);
  }
  if (typeof dataset !== 'string' || dataset.length === 0) throw new SettingsError('dataset', dataset, `openai: dataset must be the path of a data set file, got ${typeof dataset === 'string' ? 'an empty string' : typeof dataset}`);
  if (!OPENAI_APIS.includes(api)) throw new SettingsError('api', api, `openai: api must be one of ${OPENAI_APIS.join(', ')}, got '${echo(String(api))}'`);
  const flag = (name: string, value: unknown): void => {
    if (value !== undefined && typeof value !== 'boolean') throw new SettingsError(name, value, `openai: ${name} must be true or false, got ${typeof value}`);
  };
  flag('stream', stream);
  flag('ignoreEos', ignoreEos);
  flag('returnTokenIds', options.returnTokenIds);
  flag('logprobs', options.logprobs);
  flag('excludeReasoning', options.excludeReasoning);
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens >= 1 && maxTokens <= OPENAI_MAX_TOKENS_LIMIT)) {
    throw new SettingsError('maxTokens', maxTokens, `openai: maxTokens must be an integer in 1..${OPENAI_MAX_TOKENS_LIMIT}, got ${String(maxTokens)}`);
  }
  if (minTokens !== undefined && !(Number.isInteger(minTokens) && minTokens >= 0 && minTokens <= (maxTokens ?? OPENAI_MAX_TOKENS_LIMIT))) {
    throw new SettingsError('minTokens', minTokens, `openai: minTokens must be an integer in 0..${maxTokens ?? OPENAI_MAX_TOKENS_LIMIT}${maxTokens !== undefined ? ' (maxTokens)' : ''}, got ${String(minTokens)}`);
  }
  if (temperature !== undefined && !(typeof temperature === 'number' && Number.isFinite(temperature) && temperature >= 0 && temperature <= 100)) {
    throw new SettingsError('temperature', temperature, `openai: temperature must be a number in 0..100, got ${String(temperature)}`);
  }
  for (const [name, value] of [['promptField', promptField], ['tokenizer', tokenizer], ['benchmark', benchmark]] as const) {
    if (value !== undefined && (typeof value !== 'string' || value.length === 0)) throw new SettingsError(name, value, `openai: ${name} must be a non-empty string, got ${typeof value === 'string' ? 'an empty string' : typeof value}`);
  }
  if (!ACCURACY_DATA.includes(accuracyData)) throw new SettingsError('accuracyData', accuracyData, `openai: accuracyData must be one of ${ACCURACY_DATA.join(', ')}, got '${echo(String(accuracyData))}'`);
  const accuracyDtype = options.accuracyDtype ?? accuracyDtypeFor(benchmark);
  if (!ACCURACY_DTYPES.includes(accuracyDtype)) throw new SettingsError('accuracyDtype', accuracyDtype, `openai: accuracyDtype must be one of ${ACCURACY_DTYPES.join(', ')}, got '${echo(String(accuracyDtype))}'`);
  return {
    model,
    dataset,
    api,
    stream,
    generation: { maxTokens, minTokens, ignoreEos, temperature },
    returnTokenIds: false,
    returnTokenIdsOption: options.returnTokenIds,
    logprobs: options.logprobs === true,
    promptField,
    tokenizer,
    accuracyData,
    accuracyDtype,
    excludeReasoning: options.excludeReasoning === true,
  };
}

/** The run's accuracy data: ids or text, and why text. */
function accuracyPlan(config: OpenAiConfig, idPrompts: number, tokenizer: LlmTokenizer | undefined): S.AccuracyDataPlan {
  const plan = { dtype: config.accuracyDtype, excludeReasoning: config.excludeReasoning };
  if (config.accuracyData === 'text') return { ...plan, kind: 'text', reason: '--accuracy-data text' };
  if (config.accuracyData === 'ids' || idPrompts > 0 || tokenizer !== undefined || config.api === 'sglang') return { ...plan, kind: 'ids', reason: '' };
  return { ...plan, kind: 'text', reason: 'the prompts are text and no --tokenizer was given (--tokenizer FILE or --accuracy-data ids for ids)' };
}

/**
 * Reads the data set (every record checked before the run) and the
 * tokenizer, and returns the protocol.
 */
export async function createOpenAiProtocol(options: OpenAiSutOptions): Promise<NetworkProtocol> {
  const config = checkOptions(options);
  const tokenizer = config.tokenizer === undefined ? undefined : await loadLlmTokenizer(config.tokenizer, { logprobs: config.logprobs });
  const dataset = await readDataset(config.dataset, {
    refuse: refusals(config.api),
    ...(config.promptField !== undefined ? { promptField: config.promptField } : {}),
    ...(tokenizer?.vocabSize !== undefined ? { tokenIdLimit: tokenizer.vocabSize } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  const samples = dataset.samples;
  const total = samples.length;
  const performance = options.performanceSampleCount ?? total;
  if (!Number.isInteger(performance) || performance < 1 || performance > total) {
    throw new SettingsError('performanceSampleCount', options.performanceSampleCount, `performanceSampleCount must be an integer in 1..${total} (the data set's samples), got ${String(options.performanceSampleCount)}`);
  }
  const plan = accuracyPlan(config, dataset.idPrompts, tokenizer);
  config.returnTokenIds = config.returnTokenIdsOption ?? (plan.kind === 'ids' && config.api !== 'sglang');
  if (plan.kind === 'ids' && tokenizer === undefined && config.api === 'chat' && !config.returnTokenIds && !config.logprobs) {
    throw new SettingsError('accuracyData', 'ids', 'openai: accuracy data as token ids needs ids from somewhere: --tokenizer FILE (re-encodes the text), or a server that returns them (leave returnTokenIds on)');
  }
  const path = API_PATHS[config.api];
  // Shared by every request: the transport adds authorization and host to what it sends, not to this object.
  const headers = { 'content-type': 'application/json', accept: config.stream ? 'text/event-stream' : 'application/json' };
  const requests: (PreparedRequest | undefined)[] = new Array<PreparedRequest | undefined>(total);
  const counts = S.tokenSourceCountsOf((options as OpenAiProtocolOptions).tokenSourceCounts);
  const output: OutputConfig = { plan, tokenizer, counts, stream: config.stream };
  // The tokenizer's count of a text prompt, made once per sample when first needed (-1: not yet).
  const promptTokens = tokenizer !== undefined ? new Int32Array(total).fill(-1) : undefined;
  const legacy = plan.kind === 'text' && tokenizer === undefined && config.api !== 'sglang';

  const checkedIndex = (index: number, what: string): number => {
    if (!Number.isInteger(index) || index < 0 || index >= total) throw new RangeError(`openai: ${what}: sample index ${String(index)} is not in 0..${total - 1}`);
    return index;
  };
  const knownInput = (index: number): KnownInputTokens | undefined => {
    const sample = samples[index]!;
    if (sample.promptIds !== undefined) return { count: sample.promptIds.length, source: S.IN_DATASET_IDS };
    if (sample.inputTokens !== undefined) return { count: sample.inputTokens, source: S.IN_DATASET_FIELD };
    if (promptTokens === undefined || sample.prompt === undefined) return undefined;
    // As the server counts a prompt: with the special tokens the file's post-processor adds (BOS).
    if (promptTokens[index] === -1) promptTokens[index] = tokenizer!.encode(sample.prompt, { addSpecialTokens: true }).length;
    return { count: promptTokens[index]!, source: S.IN_TOKENIZER };
  };

  return {
    kind: 'openai',
    totalSampleCount: total,
    performanceSampleCount: performance,
    streamsTokens: config.stream,
    probe: (node) => (config.api === 'sglang' ? probeSglangNode(node, config.model) : probeNode(node, config.model, options.apiKey !== undefined && options.apiKey !== '')),
    // Ids from the server alone: the first sample's one-token answer must carry them, or the run would fail at its end.
    ...(plan.kind === 'ids' && tokenizer === undefined && config.api !== 'sglang' ? { checkBeforeRun: (node: NodeProbe) => checkServerIds(node, path, probeBody(samples[0]!, config)) } : {}),
    load(indices) {
      for (const index of indices) {
        const i = checkedIndex(index, 'load');
        requests[i] ??= { method: 'POST', path, headers, body: Buffer.from(requestBody(samples[i]!, config), 'utf8') };
      }
    },
    unload(indices) {
      for (const index of indices) requests[checkedIndex(index, 'unload')] = undefined;
    },
    request(index) {
      const request = requests[checkedIndex(index, 'request')];
      if (request === undefined) throw new RangeError(`openai: request: sample ${index} is not loaded (loadSamplesToRam first)`);
      return request;
    },
    reader(index, wantData) {
      const known = knownInput(checkedIndex(index, 'reader'));
      if (config.api === 'sglang') return config.stream ? new SglangStreamReader(wantData, output, known) : new SglangWholeReader(wantData, output, known);
      return config.stream ? new OpenAiStreamReader(config.api, wantData, output, known) : new OpenAiWholeReader(config.api, wantData, output, known);
    },
    describe: () => (legacy ? legacyTokenSource(config.stream, counts) : S.tokenSourceLines(counts, config.stream).join('\n')),
    accuracyDataNote: () => S.accuracyDataLine(counts, plan),
  };
}

/**
 * `--sut openai`: the protocol over the transport. Streaming runs default to
 * token latencies (`useTokenLatencies: true`, under the caller's settings);
 * without streaming no first token can be timed, so nothing is defaulted
 * (set `inferTokenLatencies` with `tokenLatencyScalingFactor` for token rates).
 */
export async function createOpenAiSut(options: OpenAiSutOptions): Promise<NetworkSut> {
  const withCounts: OpenAiProtocolOptions = { ...options, tokenSourceCounts: S.sharedTokenSourceCounts() };
  const protocol = await createOpenAiProtocol(withCounts);
  // The transport gives a SUT whose protocol streams tokens `defaultSettings: { useTokenLatencies: true }`.
  return createNetworkSut(protocol, withCounts);
}

// The SUT block's line of a run as before token ids (text prompts, no tokenizer).
function legacyTokenSource(stream: boolean, counts: S.TokenSourceCounts): string {
  const fallback = stream ? 'chunks with output otherwise' : 'none otherwise';
  return `output tokens: usage in ${Atomics.load(counts, S.OUT_USAGE)} of ${Atomics.load(counts, S.RESPONSES)} responses (${fallback})`;
}

/** The first sample, asked for one token: the answer must carry choices[0].token_ids. */
async function checkServerIds(node: NodeProbe, path: string, body: string): Promise<void> {
  const where = `${node.origin} (POST ${path}, the first sample with max_tokens 1)`;
  const res = await node.request('POST', path, body);
  const text = Buffer.from(res.body).toString('utf8');
  if (res.status < 200 || res.status > 299) throw new NetworkSetupError(`${where}: HTTP ${res.status} '${excerpt(text)}'`, { url: node.origin });
  let ids: unknown;
  try {
    ids = (JSON.parse(text) as { choices?: { token_ids?: unknown }[] }).choices?.[0]?.token_ids;
  } catch {
    ids = undefined;
  }
  if (!Array.isArray(ids)) {
    throw new NetworkSetupError(
      `${where}: the answer has no choices[0].token_ids, so the accuracy log cannot hold output token ids (vLLM >= 0.10.2 answers return_token_ids); give --tokenizer FILE to re-encode the text, or --accuracy-data text; it began '${excerpt(text)}'`,
      { url: node.origin },
    );
  }
}

async function probeNode(node: NodeProbe, model: string, hasKey: boolean): Promise<string> {
  const where = `${node.origin} (GET /v1/models)`;
  const setupError = (message: string): NetworkSetupError => new NetworkSetupError(message, { url: node.origin });
  const res = await node.request('GET', '/v1/models');
  if (res.status === 401 || res.status === 403) {
    // The body is not echoed: servers quote part of the key they refused.
    throw setupError(
      hasKey
        ? `${where}: the server refused the API key (HTTP ${res.status}); check the key in OPENAI_API_KEY or the variable --api-key-env names`
        : `${where}: the server needs an API key (HTTP ${res.status}); set OPENAI_API_KEY or name another variable with --api-key-env`,
    );
  }
  const text = Buffer.from(res.body).toString('utf8');
  if (res.status < 200 || res.status > 299) {
    throw setupError(`${where}: HTTP ${res.status} '${excerpt(text)}': is this an OpenAI-compatible server?`);
  }
  let listed: unknown;
  try {
    listed = (JSON.parse(text) as { data?: unknown }).data;
  } catch {
    listed = undefined;
  }
  if (!Array.isArray(listed)) throw setupError(`${where}: expected a model list {"data": [{"id": ...}]}, got '${excerpt(text)}'`);
  const models = listed.filter((m): m is { id: string; owned_by?: unknown } => typeof (m as { id?: unknown } | null)?.id === 'string');
  const entry = models.find((m) => m.id === model);
  if (entry === undefined) {
    const ids = models.slice(0, MODELS_LISTED).map((m) => `'${echo(m.id, 60)}'`);
    const more = models.length > MODELS_LISTED ? `, and ${models.length - MODELS_LISTED} more` : '';
    throw setupError(
      `${where}: the node does not serve the model '${echo(model)}'; it lists ${ids.length === 0 ? 'no models' : ids.join(', ') + more} (--model names the served model)`,
    );
  }
  const owner = typeof entry.owned_by === 'string' && entry.owned_by.length > 0 ? entry.owned_by : 'openai-compatible';
  return printable(`${entry.id} (${owner})`);
}

// A node's name goes into the SUT name, which must be printable and short.
function printable(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  return clean.length > 120 ? `${clean.slice(0, 119)}…` : clean;
}
