/**
 * SGLang's native API (`--api sglang`): POST /generate with `input_ids`
 * (or `text`) and `sampling_params`, answered whole or as an SSE stream of
 * `data: {"text", "output_ids", "meta_info"}` events ending with
 * `data: [DONE]` (an error is `data: {"error": {"message"}}`).
 *
 * SGLang's tokenizer_manager streams cumulative output by default (each
 * event's `text` and `output_ids` are the whole output so far) and deltas
 * with --incremental-streaming-output; `meta_info.completion_tokens` is the
 * cumulative count either way. So an event whose output_ids are at least
 * completion_tokens long holds the whole output; a shorter one is a delta
 * (MLCommons' gpt-oss-120b client keys on completion_tokens the same way).
 * Without completion_tokens an event whose ids extend the ids so far is
 * taken as cumulative. The node is probed with GET /get_model_info.
 */
import { createParser, type EventSourceMessage, type EventSourceParser, type ParseError } from 'eventsource-parser';

import { activeSeries } from '../../dispatch/active.js';
import { NetworkSetupError } from '../../errors.js';
import { echo } from '../../settings/messages.js';
import type { NodeProbe, ResponseOutcome, ResponseReader } from '../protocol.js';
import { errorText, EXCERPT_CHARS, excerpt, malformed, tokenCountField, WholeJsonBody } from './openai-readers.js';
import { OutputCollector, serverIds, type KnownInputTokens, type OutputConfig } from './output.js';

export const SGLANG_PATH = '/generate';

/** One SGLang event (or whole body) read: its output, counts, and whether it was cumulative. */
interface SglangEvent {
  text: string;
  ids: number[] | undefined;
  completionTokens: number | undefined;
  promptTokens: number | undefined;
}

function readEvent(value: Record<string, unknown>): SglangEvent | string {
  const meta = value.meta_info;
  const info = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : {};
  const completion = tokenCountField(info.completion_tokens, 'meta_info.completion_tokens');
  if (typeof completion === 'string') return completion;
  const prompt = tokenCountField(info.prompt_tokens, 'meta_info.prompt_tokens');
  if (typeof prompt === 'string') return prompt;
  const text = typeof value.text === 'string' ? value.text : '';
  let ids: number[] | undefined;
  if (value.output_ids !== undefined && value.output_ids !== null) {
    ids = serverIds(value.output_ids);
    if (ids === undefined) return `output_ids is not an array of token ids: '${excerpt(JSON.stringify(value.output_ids) ?? '')}'`;
  }
  return { text, ids, completionTokens: completion, promptTokens: prompt };
}

/**
 * Turns SGLang's events (cumulative or incremental) into deltas for the
 * OutputCollector, and keeps the last counts.
 */
class SglangOutput {
  readonly output: OutputCollector;
  private ids: number[] = [];
  private text = '';
  private cumulative: boolean | undefined;
  /**
   * Text-only events that repeated the text so far before the stream's kind was known: nothing new in a
   * cumulative stream (a token whose text the server holds back, a final event), deltas in an
   * incremental one (kept to add then).
   */
  private readonly repeats: string[] = [];
  completionTokens: number | undefined;

  constructor(config: OutputConfig, wantData: boolean, knownInput: KnownInputTokens | undefined) {
    this.output = new OutputCollector(config, wantData, knownInput);
  }

  /** The event's delta to the collector; the first token's bytes the first time there is output. */
  add(event: SglangEvent): Uint8Array | undefined {
    const ids = event.ids ?? [];
    // Decided once, at the first event after some output that tells: by the ids where there are any, else by the text.
    if (this.cumulative === undefined && this.ids.length > 0) {
      this.cumulative =
        event.completionTokens !== undefined ? ids.length >= event.completionTokens : ids.length > this.ids.length && this.ids.every((id, i) => ids[i] === id);
    } else if (this.cumulative === undefined && this.text !== '' && ids.length === 0) {
      if (event.text === this.text) {
        // Either reading fits; undecided, and no output until it is (a stream that ends undecided was cumulative).
        this.repeats.push(event.text);
        this.output.usage(event.completionTokens, event.promptTokens);
        if (event.completionTokens !== undefined) this.completionTokens = event.completionTokens;
        return undefined;
      }
      this.cumulative = event.text.length > this.text.length && event.text.startsWith(this.text);
      if (!this.cumulative) {
        for (const repeated of this.repeats.splice(0)) {
          this.text += repeated;
          this.output.add({ reasoning: '', content: repeated });
        }
      }
    }
    const cumulative = this.cumulative === true || (this.ids.length === 0 && this.text === '');
    const newIds = cumulative ? ids.slice(this.ids.length) : ids;
    const newText = cumulative && event.text.startsWith(this.text) ? event.text.slice(this.text.length) : event.text;
    if (cumulative) {
      this.ids = ids.slice();
      this.text = event.text;
    } else {
      for (const id of ids) this.ids.push(id);
      this.text += event.text;
    }
    this.output.usage(event.completionTokens, event.promptTokens);
    if (event.completionTokens !== undefined) this.completionTokens = event.completionTokens;
    if (newIds.length === 0 && newText === '') return undefined;
    // A cumulative event may revise earlier ids (a retracted request starts over): the collector holds the whole list.
    const first = this.output.add({ reasoning: '', content: newText, ids: newIds.length > 0 ? newIds : undefined });
    if (cumulative) this.output.replaceIds(this.ids);
    return first;
  }
}

/** Reads SGLang's SSE stream. */
export class SglangStreamReader implements ResponseReader {
  private readonly decoder = new TextDecoder();
  private readonly parser: EventSourceParser;
  private readonly state: SglangOutput;
  private firstToken: Uint8Array | undefined;
  private done = false;
  private failure: string | undefined;
  private sawEvent = false;
  private head = '';

  constructor(wantData: boolean, config: OutputConfig, knownInput: KnownInputTokens | undefined) {
    this.state = new SglangOutput(config, wantData, knownInput);
    this.parser = createParser({ onEvent: (event) => this.onEvent(event), onError: (error) => this.onParseError(error) });
  }

  onData(chunk: Uint8Array): Uint8Array | undefined {
    if (this.failure !== undefined) return undefined;
    const text = this.decoder.decode(chunk, { stream: true });
    if (!this.sawEvent && this.head.length < EXCERPT_CHARS) this.head += text.slice(0, EXCERPT_CHARS);
    this.parser.feed(text);
    const first = this.firstToken;
    this.firstToken = undefined;
    return first;
  }

  outputEvents(): number {
    return this.state.output.outputParts;
  }

  onEnd(): ResponseOutcome {
    if (this.failure === undefined) this.parser.feed(`${this.decoder.decode()}\n\n`);
    if (this.failure === undefined && !this.done) {
      this.failure = this.sawEvent ? 'the stream ended without data: [DONE]' : `not an SSE stream (no data: events), it began '${excerpt(this.head)}'`;
    }
    if (this.failure !== undefined) {
      this.state.output.failed();
      return malformed(this.failure);
    }
    if (this.state.output.outputParts === 0 && activeSeries.tokens) {
      this.state.output.failed();
      const c = this.state.completionTokens;
      return { ok: false, kind: 'no_first_token', message: `the stream ended with no generated output (${c === undefined ? 'no meta_info.completion_tokens' : `meta_info.completion_tokens ${c}`})` };
    }
    return this.state.output.finish();
  }

  private onEvent(event: EventSourceMessage): void {
    if (this.failure !== undefined) return;
    this.sawEvent = true;
    if (this.done) return;
    if (event.data === '[DONE]') {
      this.done = true;
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(event.data);
    } catch {
      this.failure = `an event is not JSON: '${excerpt(event.data)}'`;
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.failure = `an event is not a JSON object: '${excerpt(event.data)}'`;
      return;
    }
    const body = value as Record<string, unknown>;
    if (body.error !== undefined) {
      this.failure = `error event in the stream: ${errorText(body.error)}`;
      return;
    }
    const read = readEvent(body);
    if (typeof read === 'string') {
      this.failure = read;
      return;
    }
    const first = this.state.add(read);
    if (first !== undefined) this.firstToken = first;
  }

  private onParseError(error: ParseError): void {
    if (error.type === 'unknown-field' || this.failure !== undefined) return;
    this.failure = `the SSE stream is malformed: ${excerpt(error.message)}`;
  }
}

/** Reads SGLang's whole answer ({ text, output_ids, meta_info }). */
export class SglangWholeReader implements ResponseReader {
  private readonly body = new WholeJsonBody();
  private readonly state: SglangOutput;

  constructor(wantData: boolean, config: OutputConfig, knownInput: KnownInputTokens | undefined) {
    this.state = new SglangOutput(config, wantData, knownInput);
  }

  onData(chunk: Uint8Array): undefined {
    this.body.add(chunk);
    return undefined;
  }

  onEnd(): ResponseOutcome {
    const problem = this.read();
    if (problem === undefined) return this.state.output.finish();
    this.state.output.failed();
    return malformed(problem);
  }

  private read(): string | undefined {
    const whole = this.body.read();
    if (typeof whole === 'string') return whole;
    const { body, text } = whole;
    if (typeof body.text !== 'string' && body.output_ids === undefined) return `no "text" or "output_ids" in the body: '${excerpt(text)}'`;
    const read = readEvent(body);
    if (typeof read === 'string') return read;
    this.state.add(read);
    return undefined;
  }
}

/**
 * GET /get_model_info (SGLang's model path and whether it generates; newer
 * servers also answer /model_info): the node must serve `model` (its path,
 * the path's last part or its served name) and generate text.
 */
export async function probeSglangNode(node: NodeProbe, model: string): Promise<string> {
  const setupError = (message: string): NetworkSetupError => new NetworkSetupError(message, { url: node.origin });
  let path = '/get_model_info';
  let res = await node.request('GET', path);
  if (res.status === 404) {
    path = '/model_info';
    res = await node.request('GET', path);
  }
  const where = `${node.origin} (GET ${path})`;
  const text = Buffer.from(res.body).toString('utf8');
  if (res.status === 401 || res.status === 403) throw setupError(`${where}: the server refused the request (HTTP ${res.status}); check the API key`);
  if (res.status < 200 || res.status > 299) throw setupError(`${where}: HTTP ${res.status} '${excerpt(text)}': is this an SGLang server (--api sglang)?`);
  let info: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    info = parsed as Record<string, unknown>;
  } catch {
    throw setupError(`${where}: expected SGLang's model info {"model_path": ...}, got '${excerpt(text)}'`);
  }
  const names = [info.served_model_name, info.model_path].filter((n): n is string => typeof n === 'string' && n.length > 0);
  if (names.length === 0) throw setupError(`${where}: expected SGLang's model info {"model_path": ...}, got '${excerpt(text)}'`);
  if (info.is_generation === false) throw setupError(`${where}: the node's model '${echo(names[0]!, 60)}' does not generate text (is_generation: false)`);
  const accepted = new Set(names.flatMap((n) => [n, n.replace(/\/+$/, '').split('/').pop() ?? n]));
  if (!accepted.has(model)) {
    throw setupError(`${where}: the node serves '${echo(names.join("' / '"), 120)}', not the model '${echo(model)}' (--model names the served model: its path, the path's last part or its served name)`);
  }
  return `${names[0]!.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').slice(0, 100)} (sglang)`;
}
