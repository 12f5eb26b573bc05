/**
 * The stub's token ids: what a vLLM- or SGLang-shaped server generates for a
 * prompt, deterministic so that a test can recompute it and compare it with
 * the accuracy log (stubOutputIds), and the SGLang-shaped events.
 */

/** The first id of the ids the stub generates for a text prompt (ids for text are 1000 + the word's index). */
export const STUB_TEXT_ID_BASE = 1000;

/**
 * The stub's output for a prompt of token ids: `count` ids cycling through
 * the prompt's ids, and their text (' t<id>' per token, the first without the space).
 */
export function stubOutputIds(promptIds: readonly number[], count: number): number[] {
  const ids: number[] = [];
  for (let k = 0; k < count; k++) ids.push(promptIds[k % promptIds.length]!);
  return ids;
}

/** The text of the stub's output ids. */
export function stubIdTokens(ids: readonly number[]): string[] {
  return ids.map((id, k) => `${k === 0 ? '' : ' '}t${id}`);
}

/** The ids the stub gives a text prompt's `count` tokens: 1000 + the index of the word each token repeats. */
export function stubTextIds(promptText: string, count: number): number[] {
  const words = Math.max(1, promptText.split(/\s+/).filter((w) => w.length > 0).length);
  return Array.from({ length: count }, (_, k) => STUB_TEXT_ID_BASE + (k % words));
}

/** A token id as JSON may give it: an integer in 0..2^31-1. */
export function isTokenIdArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2 ** 31 - 1);
}

/** One SGLang /generate event: cumulative output (SGLang's default) or the delta (--incremental-streaming-output). */
export function sglangEvent(
  rid: string,
  texts: readonly string[],
  ids: readonly number[],
  upTo: number,
  from: number,
  promptTokens: number,
  done: boolean,
  withIds: boolean,
): Record<string, unknown> {
  const text = texts.slice(from, upTo).join('');
  const out: Record<string, unknown> = { text };
  if (withIds) out.output_ids = ids.slice(from, upTo);
  out.meta_info = {
    id: rid,
    finish_reason: done ? { type: 'length', length: upTo } : null,
    prompt_tokens: promptTokens,
    completion_tokens: upTo,
    cached_tokens: 0,
  };
  return out;
}
