/**
 * The OpenAI-compatible protocol (`--sut openai`): a JSONL data set of prompts
 * or chat messages, one streamed (SSE) or whole completion per sample, the
 * first output token's bytes (content, reasoning, a tool call or token ids)
 * handed to the transport to stamp, the output token count from the `usage`
 * chunk or else the number of chunks with output.
 */
import { readFile } from 'node:fs/promises';

import { createParser, type EventSourceMessage, type EventSourceParser, type ParseError } from 'eventsource-parser';

import { yieldToEventLoop } from '../api/abortable.js';
import { activeSeries } from '../api/active.js';
import { DatasetError, NetworkSetupError, SettingsError } from '../errors.js';
import { echo } from '../settings/messages.js';
import { tokenCountProblem, type NetworkProtocol, type NodeProbe, type PreparedRequest, type ResponseOutcome, type ResponseReader } from './protocol.js';
import { createNetworkSut } from './transport.js';
import type { NetworkSut, OpenAiSutOptions } from './types.js';

/** The APIs `--api` names and their paths. */
export const OPENAI_APIS = ['chat', 'completions'] as const;
export type OpenAiApi = (typeof OPENAI_APIS)[number];
const API_PATHS: Record<OpenAiApi, string> = { chat: '/v1/chat/completions', completions: '/v1/completions' };

/** Largest `max_tokens` a data set line or option may ask for. */
export const OPENAI_MAX_TOKENS_LIMIT = 2 ** 31 - 1;
// A whole (non-streamed) body larger than this is malformed: a bound on one response's memory.
const WHOLE_BODY_LIMIT_BYTES = 64 * 1024 * 1024;
// Excerpts of a server's output in failure messages.
const EXCERPT_CHARS = 80;
// Model ids listed in the error for a model a node does not serve.
const MODELS_LISTED = 10;

/** The event loop runs at least this often while a data set's lines are checked. */
const DATASET_YIELD_MS = 10;

/** One line of the data set, checked. */
interface OpenAiSample {
  prompt?: string;
  messages?: unknown[];
  maxTokens?: number;
}

/**
 * What the responses read so far came to (describe()): [responses, with
 * usage]. createOpenAiSut puts it in shared memory in its options, so the
 * protocols the dispatch workers re-create from those options count into it.
 */
type TokenSourceCounts = Int32Array;
const RESPONSES = 0;
const WITH_USAGE = 1;

/** createOpenAiSut's options as the protocol reads them (the counters are internal). */
interface OpenAiProtocolOptions extends OpenAiSutOptions {
  tokenSourceCounts?: Int32Array;
}

/**
 * Reads the JSONL data set (every line checked before the run) and returns the
 * protocol. Blank lines are skipped: sample i is the i-th non-blank line.
 */
export async function createOpenAiProtocol(options: OpenAiSutOptions): Promise<NetworkProtocol> {
  const config = checkOptions(options);
  const samples = await readOpenAiDataset(config.dataset, config.api);
  const total = samples.length;
  const performance = options.performanceSampleCount ?? total;
  if (!Number.isInteger(performance) || performance < 1 || performance > total) {
    throw new SettingsError('performanceSampleCount', options.performanceSampleCount, `performanceSampleCount must be an integer in 1..${total} (the data set's samples), got ${String(options.performanceSampleCount)}`);
  }
  const path = API_PATHS[config.api];
  // Shared by every request: the transport adds authorization and host to what it sends, not to this object.
  const headers = { 'content-type': 'application/json', accept: config.stream ? 'text/event-stream' : 'application/json' };
  const requests: (PreparedRequest | undefined)[] = new Array<PreparedRequest | undefined>(total);
  const shared = (options as OpenAiProtocolOptions).tokenSourceCounts;
  const counts: TokenSourceCounts = shared instanceof Int32Array && shared.length >= 2 ? shared : new Int32Array(2);

  const checkedIndex = (index: number, what: string): number => {
    if (!Number.isInteger(index) || index < 0 || index >= total) throw new RangeError(`openai: ${what}: sample index ${String(index)} is not in 0..${total - 1}`);
    return index;
  };

  return {
    kind: 'openai',
    totalSampleCount: total,
    performanceSampleCount: performance,
    streamsTokens: config.stream,
    probe: (node) => probeNode(node, config.model, options.apiKey !== undefined && options.apiKey !== ''),
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
      checkedIndex(index, 'reader');
      return config.stream ? new StreamReader(config.api, wantData, counts) : new WholeReader(config.api, wantData, counts);
    },
    describe: () => describeTokenSource(config.stream, counts),
  };
}

/**
 * `--sut openai`: the protocol over the transport. Streaming runs default to
 * token latencies (`useTokenLatencies: true`, under the caller's settings);
 * without streaming no first token can be timed, so nothing is defaulted
 * (set `inferTokenLatencies` with `tokenLatencyScalingFactor` for token rates).
 */
export async function createOpenAiSut(options: OpenAiSutOptions): Promise<NetworkSut> {
  const withCounts: OpenAiProtocolOptions = { ...options, tokenSourceCounts: new Int32Array(new SharedArrayBuffer(8)) };
  const protocol = await createOpenAiProtocol(withCounts);
  // The transport gives a SUT whose protocol streams tokens `defaultSettings: { useTokenLatencies: true }`.
  return createNetworkSut(protocol, withCounts);
}

interface OpenAiConfig {
  model: string;
  dataset: string;
  api: OpenAiApi;
  stream: boolean;
  maxTokens: number | undefined;
}

function checkOptions(options: OpenAiSutOptions): OpenAiConfig {
  if (typeof options !== 'object' || options === null) throw new SettingsError('options', options, `openai: options must be an object, got ${options === null ? 'null' : typeof options}`);
  const { model, dataset, api = 'chat', stream = true, maxTokens } = options;
  if (typeof model !== 'string' || model.length === 0 || /[\u0000-\u001f\u007f]/.test(model)) {
    throw new SettingsError('model', model, `openai: model must be a non-empty printable string (the served model's name), got ${typeof model === 'string' ? `'${echo(model)}'` : typeof model}`);
  }
  if (typeof dataset !== 'string' || dataset.length === 0) throw new SettingsError('dataset', dataset, `openai: dataset must be the path of a JSONL file, got ${typeof dataset === 'string' ? 'an empty string' : typeof dataset}`);
  if (!OPENAI_APIS.includes(api)) throw new SettingsError('api', api, `openai: api must be one of ${OPENAI_APIS.join(', ')}, got '${echo(String(api))}'`);
  if (typeof stream !== 'boolean') throw new SettingsError('stream', stream, `openai: stream must be true or false, got ${typeof stream}`);
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens >= 1 && maxTokens <= OPENAI_MAX_TOKENS_LIMIT)) {
    throw new SettingsError('maxTokens', maxTokens, `openai: maxTokens must be an integer in 1..${OPENAI_MAX_TOKENS_LIMIT}, got ${String(maxTokens)}`);
  }
  return { model, dataset, api, stream, maxTokens };
}

/**
 * Reads and checks an OpenAI JSONL data set: every non-blank line a JSON
 * object with `prompt` (a string) or `messages` (a non-empty array of
 * `{ role: string, content }`, chat only), optional `max_tokens` (integer
 * ≥ 1) and `input_tokens` (integer ≥ 0, informational); other fields are
 * ignored. The first bad line is a DatasetError naming file, line and field.
 */
export async function readOpenAiDataset(file: string, api: OpenAiApi): Promise<OpenAiSample[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new DatasetError(file, 0, '', `dataset ${echo(file)}: cannot be read: ${(error as Error).message}`);
  }
  const samples: OpenAiSample[] = [];
  let lineNumber = 0;
  let start = 0;
  // A large file takes seconds to check: signals and timers run in between.
  let since = performance.now();
  while (start < text.length) {
    if ((lineNumber & 1023) === 0 && performance.now() - since >= DATASET_YIELD_MS) {
      await yieldToEventLoop();
      since = performance.now();
    }
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    lineNumber++;
    const line = text.slice(start, end);
    start = end + 1;
    if (line.trim().length === 0) continue;
    samples.push(checkLine(file, lineNumber, line, api));
  }
  if (samples.length === 0) throw new DatasetError(file, 0, '', `dataset ${echo(file)}: has no samples (one JSON object a line: {"prompt": "..."} or {"messages": [...]})`);
  if (samples.length > 0xffffffff) throw new DatasetError(file, 0, '', `dataset ${echo(file)}: has more than 2^32 - 1 samples`);
  return samples;
}

function checkLine(file: string, line: number, text: string, api: OpenAiApi): OpenAiSample {
  const fail = (field: string, problem: string): DatasetError =>
    new DatasetError(file, line, field, `dataset ${echo(file)}:${line}: ${field === '' ? '' : `${field}: `}${problem}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw fail('', `not valid JSON (${(error as Error).message}); each line must be one JSON object`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw fail('', `must be a JSON object with "prompt" or "messages", got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`);
  }
  const line_ = value as Record<string, unknown>;
  const sample: OpenAiSample = {};
  const hasPrompt = line_.prompt !== undefined;
  const hasMessages = line_.messages !== undefined;
  if (hasPrompt === hasMessages) throw fail('', hasPrompt ? 'has both "prompt" and "messages"; give one' : 'needs "prompt" (a string) or "messages" (a chat array)');
  if (hasPrompt) {
    if (typeof line_.prompt !== 'string') throw fail('prompt', `must be a string, got ${jsonType(line_.prompt)}`);
    sample.prompt = line_.prompt;
  } else {
    if (api === 'completions') throw fail('messages', 'is for --api chat; --api completions takes "prompt" (a string)');
    const messages = line_.messages;
    if (!Array.isArray(messages) || messages.length === 0) throw fail('messages', `must be a non-empty array of {"role", "content"}, got ${jsonType(messages)}`);
    messages.forEach((m: unknown, i) => {
      if (typeof m !== 'object' || m === null || Array.isArray(m)) throw fail(`messages[${i}]`, `must be an object {"role", "content"}, got ${jsonType(m)}`);
      const { role, content } = m as { role?: unknown; content?: unknown };
      if (typeof role !== 'string' || role.length === 0) throw fail(`messages[${i}].role`, `must be a non-empty string (e.g. "user"), got ${jsonType(role)}`);
      if (typeof content !== 'string' && !Array.isArray(content)) throw fail(`messages[${i}].content`, `must be a string or an array of content parts, got ${jsonType(content)}`);
    });
    sample.messages = messages;
  }
  if (line_.max_tokens !== undefined) {
    const n = line_.max_tokens;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > OPENAI_MAX_TOKENS_LIMIT) {
      throw fail('max_tokens', `must be an integer in 1..${OPENAI_MAX_TOKENS_LIMIT}, got ${shortJson(n)}`);
    }
    sample.maxTokens = n;
  }
  if (line_.input_tokens !== undefined) {
    const n = line_.input_tokens;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw fail('input_tokens', `must be an integer >= 0, got ${shortJson(n)}`);
  }
  return sample;
}

function jsonType(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${shortJson(value)}`;
}

function shortJson(value: unknown): string {
  return echo(JSON.stringify(value) ?? String(value), 40);
}

function requestBody(sample: OpenAiSample, config: OpenAiConfig): string {
  const body: Record<string, unknown> = { model: config.model };
  if (config.api === 'chat') body.messages = sample.messages ?? [{ role: 'user', content: sample.prompt }];
  else body.prompt = sample.prompt;
  const maxTokens = sample.maxTokens ?? config.maxTokens;
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  body.stream = config.stream;
  if (config.stream) body.stream_options = { include_usage: true };
  return JSON.stringify(body);
}

function describeTokenSource(stream: boolean, counts: TokenSourceCounts): string {
  const fallback = stream ? 'chunks with output otherwise' : 'none otherwise';
  return `output tokens: usage in ${Atomics.load(counts, WITH_USAGE)} of ${Atomics.load(counts, RESPONSES)} responses (${fallback})`;
}

function excerpt(text: string): string {
  return echo(text, EXCERPT_CHARS);
}

/**
 * What one chunk (or whole body) generated, from its first choice: chat
 * `delta`/`message` `content`, `reasoning_content` or `reasoning` (reasoning
 * models), `tool_calls`; completions `text`; token ids (`token_ids` on the
 * choice or its delta: vLLM's shape). Any of them is output: the first chunk
 * with some is the first token.
 */
interface Generated {
  /** Reasoning text ('' for none). */
  reasoning: string;
  /** Content or completion text ('' for none). */
  content: string;
  /** Output that is not text: tool calls, token ids (undefined for none). */
  other: unknown;
  /** The body's `content` field was a string (even empty): a whole body with one is well formed. */
  hasContentField: boolean;
}

function generated(value: Record<string, unknown>, api: OpenAiApi, whole: boolean): Generated | undefined {
  const choices = value.choices;
  if (!Array.isArray(choices) || choices.length === 0) return undefined;
  const choice = choices[0] as Record<string, unknown> | null;
  if (typeof choice !== 'object' || choice === null) return undefined;
  const ids = nonEmptyArray(choice.token_ids);
  if (api === 'completions') {
    const text = typeof choice.text === 'string' ? choice.text : '';
    return { reasoning: '', content: text, other: ids, hasContentField: typeof choice.text === 'string' };
  }
  const part = (whole ? choice.message : choice.delta) as Record<string, unknown> | null | undefined;
  if (typeof part !== 'object' || part === null) return ids === undefined ? undefined : { reasoning: '', content: '', other: ids, hasContentField: false };
  // Servers send one of the two names; some send both with the same text.
  const reasoning = typeof part.reasoning_content === 'string' && part.reasoning_content !== '' ? part.reasoning_content : typeof part.reasoning === 'string' ? part.reasoning : '';
  const content = typeof part.content === 'string' ? part.content : '';
  return { reasoning, content, other: nonEmptyArray(part.tool_calls) ?? ids ?? nonEmptyArray(part.token_ids), hasContentField: typeof part.content === 'string' };
}

function nonEmptyArray(value: unknown): unknown[] | undefined {
  return Array.isArray(value) && value.length > 0 ? value : undefined;
}

function hasOutput(g: Generated): boolean {
  return g.content !== '' || g.reasoning !== '' || g.other !== undefined;
}

/** The first token's bytes: its text, or the JSON of what it generated (tool calls, token ids). */
function firstTokenBytes(g: Generated): Uint8Array {
  const text = g.reasoning + g.content;
  return Buffer.from(text !== '' ? text : (JSON.stringify(g.other) ?? ''), 'utf8');
}

/**
 * usage.completion_tokens: undefined when absent (or usage null, as vLLM
 * sends on every chunk but the last), the count, or a problem text when it is
 * not a token count (-1, 1.5, 1e300, "4": never into the core).
 */
function completionTokens(value: Record<string, unknown>): number | string | undefined {
  const usage = value.usage;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const n = (usage as { completion_tokens?: unknown }).completion_tokens;
  if (n === undefined || n === null) return undefined;
  const problem = tokenCountProblem(n);
  return problem === '' ? (n as number) : `usage.completion_tokens ${problem}`;
}

// The message of an `error` object in a response or event, short.
function errorText(error: unknown): string {
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : error;
  return excerpt(typeof message === 'string' ? message : (JSON.stringify(message) ?? 'no message'));
}

/**
 * Reads an SSE stream of chunks (eventsource-parser). The first chunk with
 * output of any kind is the first token; the output token count is usage's
 * or else the number of chunks with output; the accuracy data is the
 * reasoning text, then the content.
 */
class StreamReader implements ResponseReader {
  private readonly decoder = new TextDecoder();
  private readonly parser: EventSourceParser;
  private readonly reasoning: string[] | undefined;
  private readonly texts: string[] | undefined;
  private outputChunks = 0;
  private usageTokens: number | undefined;
  private firstToken: Uint8Array | undefined;
  private done = false;
  private failure: string | undefined;
  private sawEvent = false;
  private head = '';

  constructor(
    private readonly api: OpenAiApi,
    wantData: boolean,
    private readonly counts: TokenSourceCounts,
  ) {
    this.reasoning = wantData ? [] : undefined;
    this.texts = wantData ? [] : undefined;
    this.parser = createParser({ onEvent: (event) => this.onEvent(event), onError: (error) => this.onParseError(error) });
  }

  onData(chunk: Uint8Array): Uint8Array | undefined {
    if (this.failure !== undefined) return undefined;
    const text = this.decoder.decode(chunk, { stream: true });
    if (!this.sawEvent && this.head.length < EXCERPT_CHARS) this.head += text.slice(0, EXCERPT_CHARS);
    this.parser.feed(text);
    const first = this.firstToken;
    if (first === undefined) return undefined;
    this.firstToken = undefined;
    return first;
  }

  /** Chunks with generated output parsed so far (the transports time the gaps between them). */
  outputEvents(): number {
    return this.outputChunks;
  }

  onEnd(): ResponseOutcome {
    if (this.failure === undefined) {
      // A last event without its blank line still counts (a blank line dispatches it; with none pending it does nothing).
      this.parser.feed(`${this.decoder.decode()}\n\n`);
    }
    if (this.failure === undefined && !this.done) {
      this.failure = this.sawEvent
        ? 'the stream ended without data: [DONE]'
        : `not an SSE stream (no data: events), it began '${excerpt(this.head)}'`;
    }
    Atomics.add(this.counts, RESPONSES, 1);
    if (this.failure !== undefined) return { ok: false, kind: 'malformed_response', message: this.failure };
    if (this.usageTokens !== undefined) Atomics.add(this.counts, WITH_USAGE, 1);
    // A run timing tokens cannot time a response without any: it failed, and says what came.
    if (this.outputChunks === 0 && activeSeries.tokens) {
      const usage = this.usageTokens === undefined ? 'no usage' : `usage said ${this.usageTokens} completion token${this.usageTokens === 1 ? '' : 's'}`;
      return { ok: false, kind: 'no_first_token', message: `the stream ended with no generated output (${usage})` };
    }
    const nTokens = this.usageTokens ?? this.outputChunks;
    const data = this.texts === undefined ? undefined : Buffer.from(this.reasoning!.join('') + this.texts.join(''), 'utf8');
    return { ok: true, data, nTokens };
  }

  private onEvent(event: EventSourceMessage): void {
    if (this.failure !== undefined) return;
    this.sawEvent = true;
    const data = event.data;
    if (this.done) return;
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      this.failure = `an event is not JSON: '${excerpt(data)}'`;
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.failure = `an event is not a JSON object: '${excerpt(data)}'`;
      return;
    }
    const chunk = value as Record<string, unknown>;
    if (event.event === 'error' || chunk.error !== undefined) {
      this.failure = `error event in the stream: ${errorText(chunk.error ?? chunk)}`;
      return;
    }
    const usage = completionTokens(chunk);
    if (typeof usage === 'string') {
      this.failure = usage;
      return;
    }
    if (usage !== undefined) this.usageTokens = usage;
    const output = generated(chunk, this.api, false);
    if (output === undefined || !hasOutput(output)) return;
    if (this.outputChunks++ === 0) this.firstToken = firstTokenBytes(output);
    if (output.reasoning !== '') this.reasoning?.push(output.reasoning);
    if (output.content !== '') this.texts?.push(output.content);
  }

  private onParseError(error: ParseError): void {
    // Unknown SSE fields are ignored, as the SSE specification says.
    if (error.type === 'unknown-field' || this.failure !== undefined) return;
    this.failure = `the SSE stream is malformed: ${excerpt(error.message)}`;
  }
}

/** Reads a whole (non-streamed) JSON completion: no first token; the data is the reasoning text, then the content. */
class WholeReader implements ResponseReader {
  private readonly parts: Uint8Array[] = [];
  private size = 0;

  constructor(
    private readonly api: OpenAiApi,
    private readonly wantData: boolean,
    private readonly counts: TokenSourceCounts,
  ) {}

  onData(chunk: Uint8Array): undefined {
    this.size += chunk.length;
    if (this.size <= WHOLE_BODY_LIMIT_BYTES) this.parts.push(chunk);
    return undefined;
  }

  onEnd(): ResponseOutcome {
    Atomics.add(this.counts, RESPONSES, 1);
    if (this.size > WHOLE_BODY_LIMIT_BYTES) return malformed(`the response body exceeds ${WHOLE_BODY_LIMIT_BYTES} bytes`);
    const text = Buffer.concat(this.parts, this.size).toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return malformed(`the body is not JSON: '${excerpt(text)}'`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return malformed(`the body is not a JSON object: '${excerpt(text)}'`);
    const body = value as Record<string, unknown>;
    if (body.error !== undefined) return malformed(`error in the response: ${errorText(body.error)}`);
    const output = generated(body, this.api, true);
    // A message whose content is null is well formed when it carries reasoning or tool calls.
    if (output === undefined || (!output.hasContentField && !hasOutput(output))) {
      return malformed(`no ${this.api === 'chat' ? 'choices[0].message.content' : 'choices[0].text'} in the body: '${excerpt(text)}'`);
    }
    const nTokens = completionTokens(body);
    if (typeof nTokens === 'string') return malformed(nTokens);
    if (nTokens !== undefined) Atomics.add(this.counts, WITH_USAGE, 1);
    return { ok: true, data: this.wantData ? Buffer.from(output.reasoning + output.content, 'utf8') : undefined, nTokens };
  }
}

function malformed(message: string): ResponseOutcome {
  return { ok: false, kind: 'malformed_response', message };
}

/**
 * GET /v1/models: the node must list `model` (vLLM, TGI, SGLang, llama.cpp's
 * server and Ollama all list what they serve); its name is the listed id
 * and owner. A refused key is named as such, never shown.
 */
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
