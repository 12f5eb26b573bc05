/**
 * A deterministic OpenAI-compatible token streamer (`loadgen serve
 * --openai-stub`): a server to try the LLM path on without a GPU, and a known
 * schedule for the token-latency tests and benches. Token k of a response is
 * written at receive + ttft + (k − 1)·tpot, each timer computed from that
 * origin so lateness never accumulates; the text is derived from the prompt,
 * so an accuracy check can recompute it (openAiStubTokens).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { RunningServer, ServeAddress } from './server.js';
import { isTokenIdArray, sglangEvent, stubIdTokens, stubOutputIds, stubTextIds } from './stub-ids.js';

/** The model the stub lists and serves unless told otherwise. */
export const OPENAI_STUB_MODEL = 'loadgen-stub';
/** Output tokens of a request without `max_tokens`. */
export const OPENAI_STUB_DEFAULT_MAX_TOKENS = 16;
/** Largest `max_tokens` the stub accepts (a bound on one response's timers and memory). */
export const OPENAI_STUB_MAX_TOKENS_LIMIT = 65536;
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
   * with return_token_ids, SGLang's `output_ids`); false: a text-only server
   * that never sends ids.
   */
  tokenIds?: boolean;
  /** SGLang's /generate streams deltas (--incremental-streaming-output) instead of the cumulative output. Default false. */
  sglangIncremental?: boolean;
  /**
   * Wait the last this-many ms before each token in setImmediate turns (a busy
   * loop that still serves other requests) instead of a timer: tokens within
   * microseconds of their due time, for benches that measure a client's
   * TTFT/TPOT error, at the cost of CPU. Default 0: a timer to the due time
   * (never early; late by up to ~1 ms, libuv's timers being whole ms). 0..10.
   */
  timerSpinMs?: number;
}

/** One generation request as the stub served it (recordTimes). */
export interface OpenAiStubRecord {
  /** 1-based, in arrival order. */
  request: number;
  path: string;
  stream: boolean;
  /** Content tokens written. */
  tokens: number;
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

/**
 * The stub's output for a prompt: `count` tokens cycling through the prompt's
 * whitespace-separated words (' ' before every word but the first), or
 * 'token' when the prompt has none. For chat requests the prompt is the
 * messages' text contents joined with '\n'.
 */
export function openAiStubTokens(promptText: string, count: number): string[] {
  const words = promptText.split(/\s+/).filter((w) => w.length > 0);
  if (words.length === 0) words.push('token');
  const tokens: string[] = [];
  for (let k = 0; k < count; k++) tokens.push((k === 0 ? '' : ' ') + words[k % words.length]);
  return tokens;
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
      const record: OpenAiStubRecord = { request: number, path, stream: parsed.stream, tokens: 0, receivedNs, tokenSentNs: [] };
      if (config.recordTimes) records.push(record);
      served.add(res);
      res.on('close', () => served.delete(res));
      const generation: Generation = { api, number, parsed, fault, record, receivedNs, res };
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

interface ParsedGeneration {
  model: string;
  promptText: string;
  /** A prompt of token ids (completions `prompt: [ids]`, SGLang `input_ids`). */
  promptIds: number[] | undefined;
  maxTokens: number;
  stream: boolean;
  includeUsage: boolean;
  /** `return_token_ids: true` (vLLM). */
  returnTokenIds: boolean;
  /** `logprobs` asked (completions: an integer >= 0; chat: true). */
  logprobs: boolean;
}

/** What the stub generates for a request: each token's text and id. */
function stubOutput(parsed: ParsedGeneration): { texts: string[]; ids: number[] } {
  if (parsed.promptIds !== undefined) {
    const ids = stubOutputIds(parsed.promptIds, parsed.maxTokens);
    return { texts: stubIdTokens(ids), ids };
  }
  return { texts: openAiStubTokens(parsed.promptText, parsed.maxTokens), ids: stubTextIds(parsed.promptText, parsed.maxTokens) };
}

// The request as the stub needs it, or what is wrong with it (a 400's message).
function parseGeneration(api: 'chat' | 'completions' | 'sglang', body: Buffer, config: StubConfig): ParsedGeneration | string {
  let request: unknown;
  try {
    request = JSON.parse(body.toString('utf8'));
  } catch {
    return 'The request body is not valid JSON.';
  }
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return 'The request body must be a JSON object.';
  const r = request as Record<string, unknown>;
  if (api === 'sglang') return parseSglang(r, config);
  if (typeof r.model !== 'string') return "'model' must be a string.";
  let promptText: string;
  let promptIds: number[] | undefined;
  if (api === 'chat') {
    if (!Array.isArray(r.messages) || r.messages.length === 0) return "'messages' must be a non-empty array.";
    const texts: string[] = [];
    for (const m of r.messages as unknown[]) {
      if (typeof m !== 'object' || m === null || typeof (m as { role?: unknown }).role !== 'string') return "each message needs a string 'role'.";
      const content = (m as { content?: unknown }).content;
      if (typeof content === 'string') texts.push(content);
      else if (Array.isArray(content)) {
        for (const part of content as unknown[]) {
          const text = (part as { text?: unknown } | null)?.text;
          if (typeof text === 'string') texts.push(text);
        }
      }
    }
    promptText = texts.join('\n');
  } else if (isTokenIdArray(r.prompt)) {
    promptIds = r.prompt;
    promptText = '';
  } else {
    if (typeof r.prompt !== 'string') return "'prompt' must be a string or a non-empty array of token ids.";
    promptText = r.prompt;
  }
  const maxTokens = r.max_tokens ?? config.defaultMaxTokens;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > OPENAI_STUB_MAX_TOKENS_LIMIT) {
    return `'max_tokens' must be an integer in 1..${OPENAI_STUB_MAX_TOKENS_LIMIT}.`;
  }
  const stream = r.stream === true;
  const includeUsage = stream && (r.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const logprobs = api === 'chat' ? r.logprobs === true : typeof r.logprobs === 'number' && r.logprobs >= 0;
  return { model: r.model, promptText, promptIds, maxTokens, stream, includeUsage, returnTokenIds: r.return_token_ids === true, logprobs };
}

// SGLang's GenerateReqInput: input_ids or text, sampling_params.max_new_tokens, stream.
function parseSglang(r: Record<string, unknown>, config: StubConfig): ParsedGeneration | string {
  const params = (r.sampling_params ?? {}) as Record<string, unknown>;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return "'sampling_params' must be an object.";
  const maxTokens = params.max_new_tokens ?? config.defaultMaxTokens;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > OPENAI_STUB_MAX_TOKENS_LIMIT) {
    return `'max_new_tokens' must be an integer in 1..${OPENAI_STUB_MAX_TOKENS_LIMIT}.`;
  }
  const ids = isTokenIdArray(r.input_ids) ? r.input_ids : undefined;
  if (ids === undefined && typeof r.text !== 'string') return "'input_ids' (token ids) or 'text' is required.";
  return { model: config.model, promptText: ids === undefined ? (r.text as string) : '', promptIds: ids, maxTokens, stream: r.stream === true, includeUsage: false, returnTokenIds: false, logprobs: false };
}

interface Generation {
  api: 'chat' | 'completions' | 'sglang';
  number: number;
  parsed: ParsedGeneration;
  fault: OpenAiStubFault | undefined;
  record: OpenAiStubRecord;
  receivedNs: number;
  res: ServerResponse;
}

const CREATED = Math.floor(Date.now() / 1000);

/** A pending timer of runAt (cancel with cancelRun). */
interface RunTimer {
  timeout?: NodeJS.Timeout;
  immediate?: NodeJS.Immediate;
}

/**
 * Runs `fn` at `dueNs` (monotonic clock), never before it: setTimeout can
 * fire up to ~1 ms early (libuv's loop time is in whole ms, read once per loop
 * turn), so an early timer is re-armed, and the last ms (or `spinMs`, if
 * more) is waited in setImmediate turns (other requests are still served
 * between them).
 */
function runAt(dueNs: number, fn: () => void, spinMs: number, timer: RunTimer = {}): RunTimer {
  const check = (): void => {
    const remainingMs = (dueNs - Number(process.hrtime.bigint())) / 1e6;
    timer.timeout = undefined;
    timer.immediate = undefined;
    if (remainingMs <= 0) fn();
    else if (remainingMs > Math.max(1, spinMs)) timer.timeout = setTimeout(check, remainingMs - spinMs);
    else timer.immediate = setImmediate(check);
  };
  // Never fn() from here: a response already behind its schedule would recurse once per token.
  timer.immediate = setImmediate(check);
  return timer;
}

function cancelRun(timer: RunTimer | undefined): void {
  if (timer === undefined) return;
  clearTimeout(timer.timeout);
  clearImmediate(timer.immediate);
}

function streamTokens(g: Generation, config: StubConfig): void {
  const { res, parsed } = g;
  const { texts: tokens, ids } = stubOutput(parsed);
  const id = `${g.api === 'chat' ? 'chatcmpl' : 'cmpl'}-stub-${g.number}`;
  const object = g.api === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  const chunk = (choice: Record<string, unknown> | undefined, extra?: Record<string, unknown>): string =>
    `data: ${JSON.stringify({ id, object, created: CREATED, model: parsed.model, choices: choice === undefined ? [] : [{ index: 0, ...choice }], ...extra })}\n\n`;
  // A token's chunk is the same JSON as chunk() would make, from strings built once per response.
  const head = `data: {"id":${JSON.stringify(id)},"object":"${object}","created":${CREATED},"model":${JSON.stringify(parsed.model)},"choices":[{"index":0,`;
  const [open, close] = g.api === 'chat' ? ['"delta":{"content":', '},"logprobs":'] : ['"text":', ',"logprobs":'];
  // vLLM: token_ids on the choice (this chunk's ids) when return_token_ids asks; logprobs of the one token when logprobs does.
  const withIds = parsed.returnTokenIds && config.tokenIds;
  const logprobs = (k: number): string =>
    !parsed.logprobs ? 'null' : g.api === 'chat' ? JSON.stringify({ content: [{ token: tokens[k], logprob: -0.5, top_logprobs: [] }] }) : JSON.stringify({ tokens: [tokens[k]], token_logprobs: [-0.5], top_logprobs: null, text_offset: [0] });
  const tokenChunk = (k: number, last: boolean): string =>
    `${head}${withIds ? `"token_ids":[${ids[k]}],` : ''}${open}${JSON.stringify(tokens[k])}${close}${logprobs(k)},"finish_reason":${last ? '"length"' : 'null'}}]}\n\n`;

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // As vLLM does: a role chunk with empty content at once, which is not a token.
  if (g.api === 'chat') res.write(chunk({ delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }));

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
      if (g.parsed.includeUsage && config.usage) text += chunk(undefined, { usage: usage(parsed, tokens.length) });
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
      if (g.parsed.includeUsage && config.usage) res.write(chunk(undefined, { usage: usage(parsed, tokens.length) }));
      if (g.fault !== 'no-done') res.write('data: [DONE]\n\n');
    }
    res.end();
  };
  timer = runAt(g.receivedNs + ttftNs, sendNext, config.timerSpinMs);
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
  const { res, parsed } = g;
  const { texts: tokens, ids } = stubOutput(parsed);
  const doneNs = g.receivedNs + config.ttftMs * 1e6 + (tokens.length - 1) * config.tpotMs * 1e6;
  const timer = runAt(doneNs, () => {
    if (res.destroyed) return;
    if (g.fault === 'error-event') return sendJson(res, 200, { error: { message: 'stub: injected error', type: 'server_error', code: 500 } });
    const text = tokens.join('');
    const choice: Record<string, unknown> = g.api === 'chat' ? { index: 0, message: { role: 'assistant', content: text }, finish_reason: 'length' } : { index: 0, text, finish_reason: 'length' };
    if (parsed.returnTokenIds && config.tokenIds) choice.token_ids = ids;
    if (parsed.logprobs && g.api === 'completions') choice.logprobs = { tokens, token_logprobs: tokens.map(() => -0.5), top_logprobs: null, text_offset: [] };
    const answer: Record<string, unknown> = {
      id: `${g.api === 'chat' ? 'chatcmpl' : 'cmpl'}-stub-${g.number}`,
      object: g.api === 'chat' ? 'chat.completion' : 'text_completion',
      created: CREATED,
      model: parsed.model,
      choices: [choice],
    };
    if (config.usage) answer.usage = usage(parsed, tokens.length);
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

function promptTokenCount(parsed: ParsedGeneration): number {
  return parsed.promptIds?.length ?? parsed.promptText.split(/\s+/).filter((w) => w.length > 0).length;
}

function usage(parsed: ParsedGeneration, completionTokens: number): Record<string, number> {
  const promptTokens = promptTokenCount(parsed);
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

/**
 * SGLang's /generate: streamed events (cumulative output, or deltas with
 * sglangIncremental) on the token schedule, then [DONE]; or one body. A
 * text-only stub (tokenIds false) sends no output_ids.
 */
function answerSglang(g: Generation, config: StubConfig): void {
  const { res, parsed } = g;
  const { texts, ids } = stubOutput(parsed);
  const rid = `stub-${g.number}`;
  const prompt = promptTokenCount(parsed);
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
