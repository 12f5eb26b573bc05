/**
 * The OpenAI stub's reading of a generation request (lib/serve/openai-stub.ts):
 * OpenAI chat and completions bodies, and SGLang's /generate. A request it
 * cannot serve gets the text of a 400.
 */
import { isTokenIdArray } from './stub-ids.js';

/** Largest `max_tokens` the stub accepts (a bound on one response's timers and memory). */
export const OPENAI_STUB_MAX_TOKENS_LIMIT = 65536;

export type StubApi = 'chat' | 'completions' | 'sglang';

export interface ParsedGeneration {
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

/** What the reading needs of the stub's configuration. */
export interface RequestDefaults {
  /** The model SGLang's /generate serves (its body names none). */
  model: string;
  defaultMaxTokens: number;
}

/** The request as the stub needs it, or what is wrong with it (a 400's message). */
export function parseGeneration(api: StubApi, body: Uint8Array, defaults: RequestDefaults): ParsedGeneration | string {
  let request: unknown;
  try {
    request = JSON.parse(new TextDecoder('utf-8').decode(body));
  } catch {
    return 'The request body is not valid JSON.';
  }
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return 'The request body must be a JSON object.';
  const r = request as Record<string, unknown>;
  if (api === 'sglang') return parseSglang(r, defaults);
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
  const maxTokens = r.max_tokens ?? defaults.defaultMaxTokens;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > OPENAI_STUB_MAX_TOKENS_LIMIT) {
    return `'max_tokens' must be an integer in 1..${OPENAI_STUB_MAX_TOKENS_LIMIT}.`;
  }
  const stream = r.stream === true;
  const includeUsage = stream && (r.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const logprobs = api === 'chat' ? r.logprobs === true : typeof r.logprobs === 'number' && r.logprobs >= 0;
  return { model: r.model, promptText, promptIds, maxTokens, stream, includeUsage, returnTokenIds: r.return_token_ids === true, logprobs };
}

// SGLang's GenerateReqInput: input_ids or text, sampling_params.max_new_tokens, stream.
function parseSglang(r: Record<string, unknown>, defaults: RequestDefaults): ParsedGeneration | string {
  const params = (r.sampling_params ?? {}) as Record<string, unknown>;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return "'sampling_params' must be an object.";
  const maxTokens = params.max_new_tokens ?? defaults.defaultMaxTokens;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > OPENAI_STUB_MAX_TOKENS_LIMIT) {
    return `'max_new_tokens' must be an integer in 1..${OPENAI_STUB_MAX_TOKENS_LIMIT}.`;
  }
  const ids = isTokenIdArray(r.input_ids) ? r.input_ids : undefined;
  if (ids === undefined && typeof r.text !== 'string') return "'input_ids' (token ids) or 'text' is required.";
  return {
    model: defaults.model,
    promptText: ids === undefined ? (r.text as string) : '',
    promptIds: ids,
    maxTokens,
    stream: r.stream === true,
    includeUsage: false,
    returnTokenIds: false,
    logprobs: false,
  };
}
