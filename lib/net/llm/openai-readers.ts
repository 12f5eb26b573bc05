/**
 * Readers of OpenAI-compatible responses: an SSE stream of chunks, or a
 * whole JSON completion. The first chunk with output of any kind (content,
 * reasoning_content/reasoning, tool calls, token ids) is the first token;
 * what each chunk carried goes to the OutputCollector, which makes the
 * counts and the accuracy data at the end.
 */
import { createParser, type EventSourceMessage, type EventSourceParser, type ParseError } from 'eventsource-parser';

import { activeSeries } from '../../dispatch/active.js';
import { echo } from '../../settings/messages.js';
import { tokenCountProblem, type ResponseOutcome, type ResponseReader } from '../protocol.js';
import { OutputCollector, serverIds, type KnownInputTokens, type OutputConfig, type OutputPart } from './output.js';

// Excerpts of a server's output in failure messages.
export const EXCERPT_CHARS = 80;
// A whole (non-streamed) body larger than this is malformed: a bound on one response's memory.
export const WHOLE_BODY_LIMIT_BYTES = 64 * 1024 * 1024;

export function excerpt(text: string): string {
  return echo(text, EXCERPT_CHARS);
}

/** The message of an `error` object in a response or event, short. */
export function errorText(error: unknown): string {
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : error;
  return excerpt(typeof message === 'string' ? message : (JSON.stringify(message) ?? 'no message'));
}

/** A token count of a server's field: undefined when absent (or null), the count, or the problem. */
export function tokenCountField(value: unknown, name: string): number | string | undefined {
  if (value === undefined || value === null) return undefined;
  const problem = tokenCountProblem(value);
  return problem === '' ? (value as number) : `${name} ${problem}`;
}

/** The two OpenAI APIs these readers read. */
export type OpenAiReaderApi = 'chat' | 'completions';

/**
 * What one chunk (or whole body) generated, from its first choice: chat
 * `delta`/`message` `content`, `reasoning_content` or `reasoning`,
 * `tool_calls`; completions `text`; vLLM's `token_ids` on the choice (or
 * the delta); logprob tokens (completions `logprobs.tokens`, chat
 * `logprobs.content[].token`).
 */
interface Generated extends OutputPart {
  /** Output that is not text: tool calls, token ids (undefined for none). */
  other: unknown;
  /** The body's `content` (or `text`) field was a string (even empty): a whole body with one is well formed. */
  hasContentField: boolean;
}

function logprobTokens(logprobs: unknown, api: OpenAiReaderApi): string[] | undefined {
  if (typeof logprobs !== 'object' || logprobs === null) return undefined;
  if (api === 'completions') {
    const tokens = (logprobs as { tokens?: unknown }).tokens;
    return Array.isArray(tokens) && tokens.every((t) => typeof t === 'string') ? (tokens as string[]) : undefined;
  }
  const content = (logprobs as { content?: unknown }).content;
  if (!Array.isArray(content)) return undefined;
  const tokens: string[] = [];
  for (const entry of content) {
    const token = (entry as { token?: unknown } | null)?.token;
    if (typeof token !== 'string') return undefined;
    tokens.push(token);
  }
  return tokens;
}

function generated(value: Record<string, unknown>, api: OpenAiReaderApi, whole: boolean): Generated | undefined {
  const choices = value.choices;
  if (!Array.isArray(choices) || choices.length === 0) return undefined;
  const choice = choices[0] as Record<string, unknown> | null;
  if (typeof choice !== 'object' || choice === null) return undefined;
  const ids = serverIds(choice.token_ids);
  const nonEmptyIds = ids !== undefined && ids.length > 0 ? ids : undefined;
  const tokens = logprobTokens(choice.logprobs, api);
  if (api === 'completions') {
    const text = typeof choice.text === 'string' ? choice.text : '';
    return { reasoning: '', content: text, ids: nonEmptyIds, logprobTokens: tokens, other: nonEmptyIds, hasContentField: typeof choice.text === 'string' };
  }
  const part = (whole ? choice.message : choice.delta) as Record<string, unknown> | null | undefined;
  if (typeof part !== 'object' || part === null) {
    return nonEmptyIds === undefined ? undefined : { reasoning: '', content: '', ids: nonEmptyIds, logprobTokens: tokens, other: nonEmptyIds, hasContentField: false };
  }
  // Servers send one of the two names; some send both with the same text.
  const reasoning = typeof part.reasoning_content === 'string' && part.reasoning_content !== '' ? part.reasoning_content : typeof part.reasoning === 'string' ? part.reasoning : '';
  const content = typeof part.content === 'string' ? part.content : '';
  const deltaIds = nonEmptyIds ?? nonEmptyArray(serverIds(part.token_ids));
  return { reasoning, content, ids: deltaIds, logprobTokens: tokens, other: nonEmptyArray(part.tool_calls) ?? deltaIds, hasContentField: typeof part.content === 'string' };
}

function nonEmptyArray<T>(value: T[] | undefined | unknown): T[] | undefined {
  return Array.isArray(value) && value.length > 0 ? (value as T[]) : undefined;
}

// A chunk whose only output is its logprob tokens is a generated token too: vLLM holds back the text of a
// token that ends inside a character (it comes with the token that completes it) but sends the chunk.
function hasOutput(g: Generated): boolean {
  return g.content !== '' || g.reasoning !== '' || g.other !== undefined || (g.logprobTokens !== undefined && g.logprobTokens.length > 0);
}

/**
 * The number of the prompt's ids a chunk (or body) carries: vLLM with
 * return_token_ids sends `prompt_token_ids` once, on the choice
 * (completions) or beside the choices (chat).
 */
function promptIdCount(value: Record<string, unknown>): number | undefined {
  let field = value.prompt_token_ids;
  if (field === undefined && Array.isArray(value.choices)) field = (value.choices[0] as { prompt_token_ids?: unknown } | null | undefined)?.prompt_token_ids;
  return field === undefined || field === null ? undefined : serverIds(field)?.length;
}

/** usage.completion_tokens and usage.prompt_tokens (a problem text when either is not a token count). */
function usageOf(value: Record<string, unknown>): { output?: number; input?: number } | string | undefined {
  const usage = value.usage;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const u = usage as { completion_tokens?: unknown; prompt_tokens?: unknown };
  const output = tokenCountField(u.completion_tokens, 'usage.completion_tokens');
  if (typeof output === 'string') return output;
  const input = tokenCountField(u.prompt_tokens, 'usage.prompt_tokens');
  if (typeof input === 'string') return input;
  return { output, input };
}

/**
 * Reads an SSE stream of chunks (eventsource-parser). The output token
 * count is usage's or the best source after it (OutputCollector).
 */
export class OpenAiStreamReader implements ResponseReader {
  private readonly decoder = new TextDecoder();
  private readonly parser: EventSourceParser;
  private readonly output: OutputCollector;
  private firstToken: Uint8Array | undefined;
  private done = false;
  private failure: string | undefined;
  private sawEvent = false;
  private head = '';
  private usageOutput: number | undefined;

  constructor(
    private readonly api: OpenAiReaderApi,
    wantData: boolean,
    config: OutputConfig,
    knownInput: KnownInputTokens | undefined,
  ) {
    this.output = new OutputCollector(config, wantData, knownInput);
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

  outputEvents(): number {
    return this.output.outputParts;
  }

  onEnd(): ResponseOutcome {
    if (this.failure === undefined) {
      // A last event without its blank line still counts (a blank line dispatches it; with none pending it does nothing).
      this.parser.feed(`${this.decoder.decode()}\n\n`);
    }
    if (this.failure === undefined && !this.done) {
      this.failure = this.sawEvent ? 'the stream ended without data: [DONE]' : `not an SSE stream (no data: events), it began '${excerpt(this.head)}'`;
    }
    if (this.failure !== undefined) {
      this.output.failed();
      return { ok: false, kind: 'malformed_response', message: this.failure };
    }
    // A run timing tokens cannot time a response without any: it failed, and says what came.
    if (this.output.outputParts === 0 && activeSeries.tokens) {
      this.output.failed();
      const usage = this.usageOutput === undefined ? 'no usage' : `usage said ${this.usageOutput} completion token${this.usageOutput === 1 ? '' : 's'}`;
      return { ok: false, kind: 'no_first_token', message: `the stream ended with no generated output (${usage})` };
    }
    return this.output.finish();
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
    const usage = usageOf(chunk);
    if (typeof usage === 'string') {
      this.failure = usage;
      return;
    }
    if (usage !== undefined) {
      if (usage.output !== undefined) this.usageOutput = usage.output;
      this.output.usage(usage.output, usage.input);
    }
    const promptIds = promptIdCount(chunk);
    if (promptIds !== undefined) this.output.promptIds(promptIds);
    const output = generated(chunk, this.api, false);
    if (output === undefined || !hasOutput(output)) return;
    const first = this.output.add(output);
    if (first !== undefined) this.firstToken = first;
  }

  private onParseError(error: ParseError): void {
    // Unknown SSE fields are ignored, as the SSE specification says.
    if (error.type === 'unknown-field' || this.failure !== undefined) return;
    this.failure = `the SSE stream is malformed: ${excerpt(error.message)}`;
  }
}

/** Reads a whole (non-streamed) JSON completion: no first token. */
export class OpenAiWholeReader implements ResponseReader {
  private readonly body = new WholeJsonBody();
  private readonly output: OutputCollector;

  constructor(
    private readonly api: OpenAiReaderApi,
    wantData: boolean,
    config: OutputConfig,
    knownInput: KnownInputTokens | undefined,
  ) {
    this.output = new OutputCollector(config, wantData, knownInput);
  }

  onData(chunk: Uint8Array): undefined {
    this.body.add(chunk);
    return undefined;
  }

  onEnd(): ResponseOutcome {
    const outcome = this.read();
    if (outcome !== undefined) this.output.failed();
    return outcome ?? this.output.finish();
  }

  private read(): ResponseOutcome | undefined {
    const whole = this.body.read();
    if (typeof whole === 'string') return malformed(whole);
    const { body, text } = whole;
    const output = generated(body, this.api, true);
    // A message whose content is null is well formed when it carries reasoning or tool calls.
    if (output === undefined || (!output.hasContentField && !hasOutput(output))) {
      return malformed(`no ${this.api === 'chat' ? 'choices[0].message.content' : 'choices[0].text'} in the body: '${excerpt(text)}'`);
    }
    const usage = usageOf(body);
    if (typeof usage === 'string') return malformed(usage);
    if (usage !== undefined) this.output.usage(usage.output, usage.input);
    const promptIds = promptIdCount(body);
    if (promptIds !== undefined) this.output.promptIds(promptIds);
    if (hasOutput(output)) this.output.add(output);
    return undefined;
  }
}

/**
 * A whole (non-streamed) response body, kept up to WHOLE_BODY_LIMIT_BYTES,
 * then read as a JSON object that is not an error: what the OpenAI and
 * SGLang whole readers both need first.
 */
export class WholeJsonBody {
  private readonly parts: Uint8Array[] = [];
  private size = 0;

  add(chunk: Uint8Array): void {
    this.size += chunk.length;
    if (this.size <= WHOLE_BODY_LIMIT_BYTES) this.parts.push(chunk);
  }

  /** The body as a JSON object and its text (for excerpts), or what is wrong with it. */
  read(): { body: Record<string, unknown>; text: string } | string {
    if (this.size > WHOLE_BODY_LIMIT_BYTES) return `the response body exceeds ${WHOLE_BODY_LIMIT_BYTES} bytes`;
    const text = Buffer.concat(this.parts, this.size).toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return `the body is not JSON: '${excerpt(text)}'`;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return `the body is not a JSON object: '${excerpt(text)}'`;
    const body = value as Record<string, unknown>;
    if (body.error !== undefined) return `error in the response: ${errorText(body.error)}`;
    return { body, text };
  }
}

export function malformed(message: string): ResponseOutcome {
  return { ok: false, kind: 'malformed_response', message };
}
