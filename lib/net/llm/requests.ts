/**
 * The request bodies of the LLM APIs, built once per sample at load:
 * OpenAI chat (messages), OpenAI completions (a text prompt, or token ids
 * as `prompt: [ids]`, as MLPerf's reference clients send them to vLLM) and
 * SGLang's /generate (`input_ids` or `text` with `sampling_params`).
 * Generation parameters come from the record, else from the run's options.
 */
import type { DatasetSample, GenerationParams } from '../../datasets/types.js';

export const LLM_APIS = ['chat', 'completions', 'sglang'] as const;
export type LlmApi = (typeof LLM_APIS)[number];
export const API_PATHS: Readonly<Record<LlmApi, string>> = { chat: '/v1/chat/completions', completions: '/v1/completions', sglang: '/generate' };

export interface RequestConfig {
  model: string;
  api: LlmApi;
  stream: boolean;
  /** The run's generation parameters (a record's own win). */
  generation: GenerationParams;
  returnTokenIds: boolean;
  logprobs: boolean;
}

function generationOf(sample: DatasetSample, run: GenerationParams): GenerationParams {
  return {
    maxTokens: sample.maxTokens ?? run.maxTokens,
    minTokens: sample.minTokens ?? run.minTokens,
    ignoreEos: sample.ignoreEos ?? run.ignoreEos,
    temperature: sample.temperature ?? run.temperature,
  };
}

/** The JSON body of one sample's request. */
export function requestBody(sample: DatasetSample, config: RequestConfig): string {
  const g = generationOf(sample, config.generation);
  if (config.api === 'sglang') {
    const params: Record<string, unknown> = {};
    if (g.maxTokens !== undefined) params.max_new_tokens = g.maxTokens;
    if (g.minTokens !== undefined) params.min_new_tokens = g.minTokens;
    if (g.temperature !== undefined) params.temperature = g.temperature;
    if (g.ignoreEos !== undefined) params.ignore_eos = g.ignoreEos;
    const body: Record<string, unknown> = sample.promptIds !== undefined ? { input_ids: Array.from(sample.promptIds) } : { text: sample.prompt };
    body.sampling_params = params;
    body.stream = config.stream;
    return JSON.stringify(body);
  }
  const body: Record<string, unknown> = { model: config.model };
  if (config.api === 'chat') body.messages = sample.messages ?? [{ role: 'user', content: sample.prompt }];
  else body.prompt = sample.promptIds !== undefined ? Array.from(sample.promptIds) : sample.prompt;
  if (g.maxTokens !== undefined) body.max_tokens = g.maxTokens;
  if (g.minTokens !== undefined) body.min_tokens = g.minTokens;
  if (g.ignoreEos !== undefined) body.ignore_eos = g.ignoreEos;
  if (g.temperature !== undefined) body.temperature = g.temperature;
  body.stream = config.stream;
  if (config.stream) body.stream_options = { include_usage: true };
  if (config.returnTokenIds) body.return_token_ids = true;
  if (config.logprobs) body.logprobs = config.api === 'chat' ? true : 1;
  return JSON.stringify(body);
}

/** A one-token, whole (non-streamed) request of `sample`: the check that a server answers token ids. */
export function probeBody(sample: DatasetSample, config: RequestConfig): string {
  const generation = { ...config.generation, maxTokens: 1, minTokens: undefined };
  return requestBody({ ...sample, maxTokens: 1, minTokens: undefined }, { ...config, generation, stream: false, logprobs: false });
}
