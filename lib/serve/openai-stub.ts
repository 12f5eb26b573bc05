/**
 * A deterministic OpenAI-compatible token streamer (`loadgen serve
 * --openai-stub`): a server to try the LLM path on without a GPU, and a known
 * schedule for the token-latency tests and benches. Token k of a response is
 * written at receive + ttft + (k − 1)·tpot, each timer computed from that
 * origin so lateness never accumulates; the text is derived from the prompt,
 * so an accuracy check can recompute it (openAiStubOutput). It answers as vLLM
 * (/v1/chat/completions, /v1/completions: token_ids and prompt_token_ids with
 * return_token_ids, logprobs, reasoning chunks) and SGLang (/generate) do, in
 * a real vocabulary when given a tokenizer (stub-output.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { RunningServer, ServeAddress } from './server.js';
import { sglangEvent } from './stub-ids.js';
import { openAiStubOutput, STUB_LOGPROB_FORMS, stubLogprobToken, type StubLogprobForm, type StubOutput, type StubTokenizer } from './stub-output.js';
import { OPENAI_STUB_MAX_TOKENS_LIMIT, parseGeneration, type ParsedGeneration, type StubApi } from './stub-requests.js';
import { cancelRun, runAt, type RunTimer } from './stub-timers.js';

export { openAiStubOutput, openAiStubTokens, STUB_LOGPROB_FORMS, type StubLogprobForm, type StubOutput, type StubPrompt, type StubTokenizer } from './stub-output.js';
export { OPENAI_STUB_MAX_TOKENS_LIMIT } from './stub-requests.js';

/** The model the stub lists and serves unless told otherwise. */
export const OPENAI_STUB_MODEL = 'loadgen-stub';
/** Output tokens of a request without `max_tokens`. */
export const OPENAI_STUB_DEFAULT_MAX_TOKENS = 16;
// A request body larger than this is refused (413): prompts are small.
const BODY_LIMIT_BYTES = 8 * 1024 * 1024;
// How long an idle keep-alive connection stays open (`Keep-Alive: timeout=65`,
// as the KServe server's): with node:http's 5 s, clients at a few requests/s
// reconnected mid-run, the connect landing inside a request's TTFT.
const KEEP_ALIVE_MS = 65_000;

/**
 * A fault the stub injects into one generation request, for failure tests:
 * 'http-500' answers 500; 'malformed-chunk' sends a chunk that is not JSON
 * after the first token (non-stream: a body that is not JSON); 'error-event'
 * sends an `{ error }` object after the first token (non-stream: instead of
 * the completion); 'no-done' ends the stream without `data: [DONE]`
 * (non-stream: a truncated body); 'reset' destroys the connection after the
 * first token (non-stream: after half the body; a response that had begun is
 * never sent again by a client, so it fails).
 */
export type OpenAiStubFault = 'http-500' | 'malformed-chunk' | 'error-event' | 'no-done' | 'reset';
export const OPENAI_STUB_FAULTS: readonly OpenAiStubFault[] = ['http-500', 'malformed-chunk', 'error-event', 'no-done', 'reset'];

export interface OpenAiStubOptions extends ServeAddress {
  /** Time to the first content token, ms (from the request's last byte read). */
  ttftMs: number;
  /** Time between content tokens, ms. */
  tpotMs: number;
  /** The model it lists (GET /v1/models) and serves; another model is a 404. Default 'loadgen-stub'. */
  model?: string;
  /** Output tokens of a request without `max_tokens` (default 16). */
  defaultMaxTokens?: number;
  /** Default true; false: never send usage (neither the stream's usage chunk nor the body's `usage`). */
  usage?: boolean;
  /** Require `Authorization: Bearer <apiKey>` on every /v1 route (401 otherwise). */
  apiKey?: string;
  /** Faults by the 1-based number of the generation request (in arrival order). */
  faults?: Readonly<Record<number, OpenAiStubFault>>;
  /** Record each generation request's times (records()); for benches. */
  recordTimes?: boolean;
  /**
   * Default true: token ids where a server sends them (vLLM's `token_ids`
   * and `prompt_token_ids` with return_token_ids, SGLang's `output_ids`);
   * false: a text-only server that never sends ids.
   */
  tokenIds?: boolean;
  /** SGLang's /generate streams deltas (--incremental-streaming-output) instead of the cumulative output. Default false. */
  sglangIncremental?: boolean;
  /**
   * Speak this tokenizer's vocabulary (lib/tokenizer's loadTokenizer): a
   * response repeats the prompt's tokens (a text prompt encoded; special
   * tokens left out), its ids real ids and its text streamed as a server's
   * detokenizer streams it; usage counts a text prompt with the tokenizer
   * (BOS included). Without one, the text cycles through the prompt's words
   * and the ids are made up (stub-ids.ts).
   */
  tokenizer?: StubTokenizer;
  /** How `logprobs` write each token (see StubLogprobForm). Default 'text'. */
  logprobForm?: StubLogprobForm;
  /**
   * Chat only: the first this-many tokens of each response are reasoning,
   * streamed as `delta.reasoning_content` (or `reasoningField`), the rest as
   * content; 'all' for a reasoning-only stream. Default 0.
   */
  reasoningTokens?: number | 'all';
  /** The reasoning field: vLLM's `reasoning_content` (default) or `reasoning` (newer vLLM, gpt-oss). */
  reasoningField?: 'reasoning_content' | 'reasoning';
  /**
   * Wait the last this-many ms before each token in setImmediate turns (a busy
   * loop that still serves other requests) instead of a timer: tokens within
   * microseconds of their due time, for benches that measure a client's
   * TTFT/TPOT error, at the cost of CPU. Default 0: a timer to the due time
   * (never early; late by up to ~1 ms, libuv's timers being whole ms). 0..10.
   */
  timerSpinMs?: number;
}

/** A record keeps this much of the prompt's text: enough to tell a bench's prompts apart, bounded for long ones. */
export const OPENAI_STUB_RECORD_PROMPT_CHARS = 256;

/** One generation request as the stub served it (recordTimes). */
export interface OpenAiStubRecord {
  /** 1-based, in arrival order. */
  request: number;
  path: string;
  stream: boolean;
  /** Content tokens written. */
  tokens: number;
  /** The prompt's text, its first OPENAI_STUB_RECORD_PROMPT_CHARS characters ('' for token ids): a bench pairs it with the client's request. */
  prompt: string;
  /**
   * When the request's last byte was read: the schedule's origin. Times are
   * CLOCK_MONOTONIC ns (process.hrtime), the clock of loadgen's clockNs() on
   * Linux, so a client on the same machine can compare them with its stamps.
   */
  receivedNs: number;
  /** When each content token's chunk was handed to the socket (non-stream: one entry, the body). */
  tokenSentNs: number[];
}

/** The running stub: a RunningServer that also tells what it served. */
export interface OpenAiStub extends RunningServer {
  readonly model: string;
  /** Generation requests received so far. */
  readonly requestCount: number;
  /** The requests served so far, in arrival order (empty unless recordTimes). */
  records(): readonly OpenAiStubRecord[];
}

/** A deterministic OpenAI-compatible token streamer (`loadgen serve --openai-stub`). */
export async function startOpenAiStub(options: OpenAiStubOptions): Promise<OpenAiStub> {
  const config = checkOptions(options);
  const served = new Set<ServerResponse>();
  const records: OpenAiStubRecord[] = [];
  let requestCount = 0;

  const server = createServer({ noDelay: true, keepAlive: true, keepAliveTimeout: KEEP_ALIVE_MS }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (config.apiKey !== undefined && req.headers.authorization !== `Bearer ${config.apiKey}`) {
      // Read and drop the body so a keep-alive connection stays usable.
      req.resume();
      sendError(res, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
      return;
    }
    if (path === '/v1/models') {
      req.resume();
      if (req.method !== 'GET') return sendError(res, 405, `${req.method} ${path}: use GET.`, 'invalid_request_error');
      sendJson(res, 200, { object: 'list', data: [{ id: config.model, object: 'model', created: 0, owned_by: OPENAI_STUB_MODEL }] });
      return;
    }
    if (path === '/get_model_info') {
      req.resume();
      if (req.method !== 'GET') return sendError(res, 405, `${req.method} ${path}: use GET.`, 'invalid_request_error');
      sendJson(res, 200, { model_path: config.model, tokenizer_path: config.model, is_generation: true });
      return;
    }
    const api = path === '/v1/chat/completions' ? 'chat' : path === '/v1/completions' ? 'completions' : path === '/generate' ? 'sglang' : undefined;
    if (api === undefined) {
      req.resume();
      return sendError(res, 404, `No route ${req.method} ${path}.`, 'invalid_request_error');
    }
    if (req.method !== 'POST') {
      req.resume();
      return sendError(res, 405, `${req.method} ${path}: use POST.`, 'invalid_request_error');
    }
    readBody(req, (body, tooLarge) => {
      const receivedNs = Number(process.hrtime.bigint());
      if (tooLarge) return sendError(res, 413, `The request body exceeds ${BODY_LIMIT_BYTES} bytes.`, 'invalid_request_error');
      const number = ++requestCount;
      const parsed = parseGeneration(api, body, config);
      if (typeof parsed === 'string') return sendError(res, 400, parsed, 'invalid_request_error');
      if (parsed.model !== config.model) {
        return sendError(res, 404, `The model '${parsed.model}' does not exist.`, 'invalid_request_error', 'model_not_found');
      }
      const fault = config.faults[number];
      if (fault === 'http-500') return sendError(res, 500, 'stub: injected server error.', 'server_error');
      const record: OpenAiStubRecord = {
        request: number, path, stream: parsed.stream, tokens: 0, prompt: config.recordTimes ? parsed.promptText.slice(0, OPENAI_STUB_RECORD_PROMPT_CHARS) : '', receivedNs, tokenSentNs: [],
      };
      if (config.recordTimes) records.push(record);
      served.add(res);
      res.on('close', () => served.delete(res));
      const output = openAiStubOutput(parsed, config.tokenizer);
      const generation: Generation = { api, number, parsed, output, fault, record, receivedNs, res };
      if (api === 'sglang') answerSglang(generation, config);
      else if (parsed.stream) streamTokens(generation, config);
      else answerWhole(generation, config);
    });
  });

  await listen(server, config.host, config.port);
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    model: config.model,
    get requestCount() {
      return requestCount;
    },
    records: () => records,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of served) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface StubConfig {
  host: string;
  port: number;
  ttftMs: number;
  tpotMs: number;
  model: string;
  defaultMaxTokens: number;
  usage: boolean;
  apiKey: string | undefined;
  faults: Readonly<Record<number, OpenAiStubFault>>;
  recordTimes: boolean;
  timerSpinMs: number;
  tokenIds: boolean;
  sglangIncremental: boolean;
  tokenizer: StubTokenizer | undefined;
  logprobForm: StubLogprobForm;
  /** Reasoning tokens of a chat response (Infinity: all). */
  reasoningTokens: number;
  reasoningField: 'reasoning_content' | 'reasoning';
}

function checkOptions(options: OpenAiStubOptions): StubConfig {
  if (typeof options !== 'object' || options === null) throw new TypeError('startOpenAiStub(options): options must be an object');
  const ms = (name: 'ttftMs' | 'tpotMs'): number => {
    const v = options[name];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 3_600_000) {
      throw new RangeError(`startOpenAiStub: ${name} must be a number of ms in 0..3600000, got ${String(v)}`);
    }
    return v;
  };
  const port = options.port ?? 8000;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`startOpenAiStub: port must be an integer in 0..65535, got ${String(port)}`);
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host.length === 0) throw new TypeError(`startOpenAiStub: host must be a non-empty string`);
  const model = options.model ?? OPENAI_STUB_MODEL;
  if (typeof model !== 'string' || model.length === 0) throw new TypeError('startOpenAiStub: model must be a non-empty string');
  const defaultMaxTokens = options.defaultMaxTokens ?? OPENAI_STUB_DEFAULT_MAX_TOKENS;
  if (!Number.isInteger(defaultMaxTokens) || defaultMaxTokens < 1 || defaultMaxTokens > OPENAI_STUB_MAX_TOKENS_LIMIT) {
    throw new RangeError(`startOpenAiStub: defaultMaxTokens must be an integer in 1..${OPENAI_STUB_MAX_TOKENS_LIMIT}, got ${String(defaultMaxTokens)}`);
  }
  if (options.apiKey !== undefined && (typeof options.apiKey !== 'string' || options.apiKey.length === 0)) {
    throw new TypeError('startOpenAiStub: apiKey must be a non-empty string when given');
  }
  const faults = options.faults ?? {};
  for (const [n, fault] of Object.entries(faults)) {
    if (!/^[1-9]\d*$/.test(n) || !OPENAI_STUB_FAULTS.includes(fault)) {
      throw new RangeError(`startOpenAiStub: faults maps request numbers (1, 2, ...) to one of ${OPENAI_STUB_FAULTS.join(', ')}; got ${n}: ${String(fault)}`);
    }
  }
  const timerSpinMs = options.timerSpinMs ?? 0;
  if (typeof timerSpinMs !== 'number' || !(timerSpinMs >= 0 && timerSpinMs <= 10)) {
    throw new RangeError(`startOpenAiStub: timerSpinMs must be a number of ms in 0..10, got ${String(timerSpinMs)}`);
  }
  for (const name of ['tokenIds', 'sglangIncremental', 'usage', 'recordTimes'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') throw new TypeError(`startOpenAiStub: ${name} must be true or false, got ${typeof options[name]}`);
  }
  const tokenizer = options.tokenizer;
  if (tokenizer !== undefined && (typeof tokenizer !== 'object' || tokenizer === null || typeof tokenizer.encode !== 'function' || typeof tokenizer.decode !== 'function')) {
    throw new TypeError('startOpenAiStub: tokenizer must be a loaded tokenizer (loadTokenizer(file)): encode, decode, idToToken, specialTokenIds');
  }
  const logprobForm = options.logprobForm ?? 'text';
  if (!STUB_LOGPROB_FORMS.includes(logprobForm)) throw new RangeError(`startOpenAiStub: logprobForm must be one of ${STUB_LOGPROB_FORMS.join(', ')}, got ${String(logprobForm)}`);
  const reasoning = options.reasoningTokens ?? 0;
  if (reasoning !== 'all' && !(Number.isInteger(reasoning) && reasoning >= 0 && reasoning <= OPENAI_STUB_MAX_TOKENS_LIMIT)) {
    throw new RangeError(`startOpenAiStub: reasoningTokens must be an integer in 0..${OPENAI_STUB_MAX_TOKENS_LIMIT} or 'all', got ${String(reasoning)}`);
  }
  const reasoningField = options.reasoningField ?? 'reasoning_content';
  if (reasoningField !== 'reasoning_content' && reasoningField !== 'reasoning') {
    throw new RangeError(`startOpenAiStub: reasoningField must be 'reasoning_content' or 'reasoning', got ${String(reasoningField)}`);
  }
  return {
    host,
    port,
    ttftMs: ms('ttftMs'),
    tpotMs: ms('tpotMs'),
    model,
    defaultMaxTokens,
    usage: options.usage ?? true,
    apiKey: options.apiKey,
    faults,
    recordTimes: options.recordTimes ?? false,
    timerSpinMs,
    tokenIds: options.tokenIds ?? true,
    sglangIncremental: options.sglangIncremental ?? false,
    tokenizer,
    logprobForm,
    reasoningTokens: reasoning === 'all' ? Infinity : reasoning,
    reasoningField,
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(new Error(`startOpenAiStub: cannot listen on ${host}:${port}: ${error.message}`, { cause: error }));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function readBody(req: IncomingMessage, done: (body: Buffer, tooLarge: boolean) => void): void {
  const parts: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > BODY_LIMIT_BYTES) tooLarge = true;
    else parts.push(chunk);
  });
  req.on('end', () => done(Buffer.concat(parts), tooLarge));
  req.on('error', () => undefined);
}

interface Generation {
  api: StubApi;
  number: number;
  parsed: ParsedGeneration;
  output: StubOutput;
  fault: OpenAiStubFault | undefined;
  record: OpenAiStubRecord;
  receivedNs: number;
  res: ServerResponse;
}

const CREATED = Math.floor(Date.now() / 1000);

function streamTokens(g: Generation, config: StubConfig): void {
  const { res, parsed, output } = g;
  const { texts: tokens, ids } = output;
  const id = `${g.api === 'chat' ? 'chatcmpl' : 'cmpl'}-stub-${g.number}`;
  const object = g.api === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  const chunk = (choice: Record<string, unknown> | undefined, extra?: Record<string, unknown>): string =>
    `data: ${JSON.stringify({ id, object, created: CREATED, model: parsed.model, choices: choice === undefined ? [] : [{ index: 0, ...choice }], ...extra })}\n\n`;
  // A token's chunk is the same JSON as chunk() would make, from strings built once per response.
  const head = `data: {"id":${JSON.stringify(id)},"object":"${object}","created":${CREATED},"model":${JSON.stringify(parsed.model)},"choices":[{"index":0,`;
  const reasoning = reasoningCount(g, config);
  const opening = (k: number): string => (g.api !== 'chat' ? '"text":' : k < reasoning ? `"delta":{"${config.reasoningField}":` : '"delta":{"content":');
  const close = g.api === 'chat' ? '},"logprobs":' : ',"logprobs":';
  // vLLM: token_ids on the choice (this chunk's ids) when return_token_ids asks, and prompt_token_ids once
  // (completions: on the first token's choice; chat: on the role chunk); logprobs of the one token when logprobs does.
  const withIds = parsed.returnTokenIds && config.tokenIds;
  const logprobs = (k: number): string => {
    if (!parsed.logprobs) return 'null';
    const token = logprobToken(g, k, config);
    return g.api === 'chat' ? JSON.stringify({ content: [{ token, logprob: -0.5, top_logprobs: [] }] }) : JSON.stringify({ tokens: [token], token_logprobs: [-0.5], top_logprobs: null, text_offset: [0] });
  };
  const promptIds = withIds && g.api === 'completions' ? `"prompt_token_ids":${JSON.stringify(output.promptIds)},` : '';
  const tokenChunk = (k: number, last: boolean): string =>
    `${head}${k === 0 ? promptIds : ''}${withIds ? `"token_ids":[${ids[k]}],` : ''}${opening(k)}${JSON.stringify(tokens[k])}${close}${logprobs(k)},"finish_reason":${last ? '"length"' : 'null'}}]}\n\n`;

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // As vLLM does: a role chunk with empty content at once, which is not a token.
  if (g.api === 'chat') {
    res.write(chunk({ delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }, withIds ? { prompt_token_ids: output.promptIds } : undefined));
  }

  const ttftNs = config.ttftMs * 1e6;
  const tpotNs = config.tpotMs * 1e6;
  let k = 0;
  let timer: RunTimer | undefined;
  res.on('close', () => cancelRun(timer));
  const sendNext = (): void => {
    if (res.destroyed) return;
    const last = k === tokens.length - 1;
    let text = tokenChunk(k, last);
    // The last token, the usage chunk and [DONE] in one write: the response's last byte comes with its last token.
    if (last && g.fault === undefined) {
      if (g.parsed.includeUsage && config.usage) text += chunk(undefined, { usage: usage(output) });
      text += 'data: [DONE]\n\n';
    }
    res.write(text);
    if (config.recordTimes) g.record.tokenSentNs.push(Number(process.hrtime.bigint()));
    g.record.tokens = ++k;
    if (k === 1 && g.fault !== undefined && injectStreamFault(g, chunk)) return;
    if (k < tokens.length) {
      timer = runAt(g.receivedNs + ttftNs + k * tpotNs, sendNext, config.timerSpinMs, timer);
      return;
    }
    if (g.fault !== undefined) {
      if (g.parsed.includeUsage && config.usage) res.write(chunk(undefined, { usage: usage(output) }));
      if (g.fault !== 'no-done') res.write('data: [DONE]\n\n');
    }
    res.end();
  };
  timer = runAt(g.receivedNs + ttftNs, sendNext, config.timerSpinMs);
}

// The reasoning tokens of a response: chat only (vLLM's reasoning parsers split chat messages).
function reasoningCount(g: Generation, config: StubConfig): number {
  return g.api === 'chat' ? Math.min(config.reasoningTokens, g.output.ids.length) : 0;
}

function logprobToken(g: Generation, k: number, config: StubConfig): string {
  return stubLogprobToken(g.output, k, config.logprobForm, config.tokenizer);
}

// After the first token: true when the fault ended the response.
function injectStreamFault(g: Generation, chunk: (choice: undefined, extra: Record<string, unknown>) => string): boolean {
  switch (g.fault) {
    case 'malformed-chunk':
      g.res.write('data: {"choices": [{"delta": {"content": "x"\n\n');
      return false;
    case 'error-event':
      g.res.write(chunk(undefined, { error: { message: 'stub: injected error event', type: 'server_error', code: 500 } }));
      g.res.end('data: [DONE]\n\n');
      return true;
    case 'reset':
      g.res.destroy();
      return true;
    default:
      return false;
  }
}

function answerWhole(g: Generation, config: StubConfig): void {
  const { res, parsed, output } = g;
  const { texts: tokens, ids } = output;
  const doneNs = g.receivedNs + config.ttftMs * 1e6 + (tokens.length - 1) * config.tpotMs * 1e6;
  const timer = runAt(doneNs, () => {
    if (res.destroyed) return;
    if (g.fault === 'error-event') return sendJson(res, 200, { error: { message: 'stub: injected error', type: 'server_error', code: 500 } });
    const withIds = parsed.returnTokenIds && config.tokenIds;
    const reasoning = reasoningCount(g, config);
    const content = tokens.slice(reasoning).join('');
    const message: Record<string, unknown> = { role: 'assistant', content: reasoning === tokens.length ? null : content };
    if (reasoning > 0) message[config.reasoningField] = tokens.slice(0, reasoning).join('');
    const choice: Record<string, unknown> = g.api === 'chat' ? { index: 0, message, finish_reason: 'length' } : { index: 0, text: content, finish_reason: 'length' };
    if (withIds) {
      choice.token_ids = ids;
      if (g.api === 'completions') choice.prompt_token_ids = output.promptIds;
    }
    if (parsed.logprobs) {
      const written = tokens.map((_, k) => logprobToken(g, k, config));
      choice.logprobs = g.api === 'chat'
        ? { content: written.map((token) => ({ token, logprob: -0.5, top_logprobs: [] })) }
        : { tokens: written, token_logprobs: written.map(() => -0.5), top_logprobs: null, text_offset: [] };
    }
    const answer: Record<string, unknown> = {
      id: `${g.api === 'chat' ? 'chatcmpl' : 'cmpl'}-stub-${g.number}`,
      object: g.api === 'chat' ? 'chat.completion' : 'text_completion',
      created: CREATED,
      model: parsed.model,
      choices: [choice],
    };
    // vLLM's chat completion carries the prompt's ids beside its choices.
    if (withIds && g.api === 'chat') answer.prompt_token_ids = output.promptIds;
    if (config.usage) answer.usage = usage(output);
    let body = JSON.stringify(answer);
    if (g.fault === 'malformed-chunk') body = `{"choices": [${body}`;
    else if (g.fault === 'no-done') body = body.slice(0, body.length >> 1);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    if (g.fault === 'reset') return void res.write(body.slice(0, body.length >> 1), () => res.destroy());
    res.end(body);
    g.record.tokens = tokens.length;
    if (config.recordTimes) g.record.tokenSentNs.push(Number(process.hrtime.bigint()));
  }, config.timerSpinMs);
  res.on('close', () => cancelRun(timer));
}

function usage(output: StubOutput): Record<string, number> {
  const promptTokens = output.promptIds.length;
  const completionTokens = output.ids.length;
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

/**
 * SGLang's /generate: streamed events (cumulative output, or deltas with
 * sglangIncremental) on the token schedule, then [DONE]; or one body. A
 * text-only stub (tokenIds false) sends no output_ids.
 */
function answerSglang(g: Generation, config: StubConfig): void {
  const { res, parsed, output } = g;
  const { texts, ids } = output;
  const rid = `stub-${g.number}`;
  const prompt = output.promptIds.length;
  const event = (upTo: number, from: number, done: boolean): Record<string, unknown> => sglangEvent(rid, texts, ids, upTo, from, prompt, done, config.tokenIds);
  if (!parsed.stream) {
    const timer = runAt(g.receivedNs + config.ttftMs * 1e6 + (texts.length - 1) * config.tpotMs * 1e6, () => {
      if (res.destroyed) return;
      if (g.fault === 'error-event') return sendJson(res, 400, { error: { message: 'stub: injected error' } });
      sendJson(res, 200, event(texts.length, 0, true));
      g.record.tokens = texts.length;
    }, config.timerSpinMs);
    res.on('close', () => cancelRun(timer));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let k = 0;
  let timer: RunTimer | undefined;
  res.on('close', () => cancelRun(timer));
  const sendNext = (): void => {
    if (res.destroyed) return;
    k++;
    const last = k === texts.length;
    let text = `data: ${JSON.stringify(event(k, config.sglangIncremental ? k - 1 : 0, last))}\n\n`;
    if (last && g.fault !== 'no-done') text += 'data: [DONE]\n\n';
    if (k === 1 && g.fault === 'error-event') {
      res.end(`${text}data: ${JSON.stringify({ error: { message: 'stub: injected error event' } })}\n\ndata: [DONE]\n\n`);
      return;
    }
    res.write(text);
    if (config.recordTimes) g.record.tokenSentNs.push(Number(process.hrtime.bigint()));
    g.record.tokens = k;
    if (k === 1 && g.fault === 'reset') return void res.destroy();
    if (!last) timer = runAt(g.receivedNs + config.ttftMs * 1e6 + k * config.tpotMs * 1e6, sendNext, config.timerSpinMs, timer);
    else res.end();
  };
  timer = runAt(g.receivedNs + config.ttftMs * 1e6, sendNext, config.timerSpinMs);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendError(res: ServerResponse, status: number, message: string, type: string, code: string | null = null): void {
  sendJson(res, status, { error: { message, type, param: null, code } });
}
