/**
 * `loadgen serve --openai-stub`'s options: the serve command (lib/cli/serve-command.ts)
 * adds them with addOpenAiStubOptions and turns the parsed values into
 * startOpenAiStub's options with openAiStubOptionsFromCli.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';

import { SettingsError } from '../errors.js';
import {
  OPENAI_STUB_DEFAULT_MAX_TOKENS,
  OPENAI_STUB_MAX_TOKENS_LIMIT,
  OPENAI_STUB_MODEL,
  STUB_LOGPROB_FORMS,
  type OpenAiStubOptions,
  type StubLogprobForm,
} from '../serve/openai-stub.js';
import type { ServeAddress } from '../serve/server.js';
import { echo } from '../settings/messages.js';
import { loadTokenizer } from '../tokenizer/index.js';

export const OPENAI_STUB_DEFAULT_TTFT_MS = 20;
export const OPENAI_STUB_DEFAULT_TPOT_MS = 5;

/** The stub's options as commander parses them (camelCase attribute names). */
export interface OpenAiStubCliValues {
  ttftMs?: number;
  tpotMs?: number;
  stubModel?: string;
  stubMaxTokens?: number;
  /** false with --no-usage. */
  usage?: boolean;
  stubApiKeyEnv?: string;
  stubSpinMs?: number;
  /** false with --no-token-ids. */
  tokenIds?: boolean;
  sglangIncremental?: boolean;
  stubTokenizer?: string;
  logprobForm?: StubLogprobForm;
  reasoningTokens?: number | 'all';
  reasoningField?: 'reasoning_content' | 'reasoning';
}

/** The attribute names of the stub's options (the serve command refuses them without --openai-stub). */
export const OPENAI_STUB_CLI_KEYS: readonly (keyof OpenAiStubCliValues)[] = [
  'ttftMs',
  'tpotMs',
  'stubModel',
  'stubMaxTokens',
  'usage',
  'stubApiKeyEnv',
  'stubSpinMs',
  'tokenIds',
  'sglangIncremental',
  'stubTokenizer',
  'logprobForm',
  'reasoningTokens',
  'reasoningField',
];

/** The flag of each stub option, for messages (a negatable one is named as given: --no-usage). */
export function openAiStubFlag(key: keyof OpenAiStubCliValues): string {
  if (key === 'usage') return '--no-usage';
  if (key === 'tokenIds') return '--no-token-ids';
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

function milliseconds(name: string): (value: string) => number {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(n) || n > 3_600_000) {
      throw new InvalidArgumentError(`${name} must be a number of milliseconds in 0..3600000, got '${echo(value)}'.`);
    }
    return n;
  };
}

function tokenCount(name: string): (value: string) => number {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < 1 || n > OPENAI_STUB_MAX_TOKENS_LIMIT) {
      throw new InvalidArgumentError(`${name} must be an integer in 1..${OPENAI_STUB_MAX_TOKENS_LIMIT}, got '${echo(value)}'.`);
    }
    return n;
  };
}

function spinMilliseconds(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n > 10) throw new InvalidArgumentError(`--stub-spin-ms must be a number of milliseconds in 0..10, got '${echo(value)}'.`);
  return n;
}

function reasoningTokens(value: string): number | 'all' {
  if (value === 'all') return 'all';
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > OPENAI_STUB_MAX_TOKENS_LIMIT) {
    throw new InvalidArgumentError(`--reasoning-tokens must be an integer in 0..${OPENAI_STUB_MAX_TOKENS_LIMIT} or 'all', got '${echo(value)}'.`);
  }
  return n;
}

/** Adds the stub's options to a command (defaults are applied by openAiStubOptionsFromCli). */
export function addOpenAiStubOptions(command: Command): Command {
  return command
    .addOption(new Option('--ttft-ms <ms>', `--openai-stub: time to the first token (default ${OPENAI_STUB_DEFAULT_TTFT_MS})`).argParser(milliseconds('--ttft-ms')))
    .addOption(new Option('--tpot-ms <ms>', `--openai-stub: time between tokens (default ${OPENAI_STUB_DEFAULT_TPOT_MS})`).argParser(milliseconds('--tpot-ms')))
    .addOption(new Option('--stub-model <name>', `--openai-stub: the model it lists and serves (default ${OPENAI_STUB_MODEL})`))
    .addOption(
      new Option('--stub-max-tokens <n>', `--openai-stub: output tokens of a request without max_tokens (default ${OPENAI_STUB_DEFAULT_MAX_TOKENS})`).argParser(
        tokenCount('--stub-max-tokens'),
      ),
    )
    .addOption(new Option('--no-usage', '--openai-stub: never send token usage (clients count content chunks)'))
    .addOption(new Option('--stub-api-key-env <NAME>', '--openai-stub: require the API key held by this environment variable'))
    .addOption(
      new Option('--stub-spin-ms <ms>', '--openai-stub: busy-wait the last ms before each token, for a schedule exact to microseconds (0..10, default 0)').argParser(
        spinMilliseconds,
      ),
    )
    .addOption(new Option('--no-token-ids', "--openai-stub: a text-only server: never send token ids (vLLM's token_ids and prompt_token_ids, SGLang's output_ids)"))
    .addOption(new Option('--sglang-incremental', "--openai-stub: /generate streams deltas (SGLang's --incremental-streaming-output), not the cumulative output"))
    .addOption(
      new Option(
        '--stub-tokenizer <file>',
        "--openai-stub: speak this tokenizer.json's vocabulary: a response repeats the prompt's tokens, real ids, text streamed as a server detokenizes it",
      ),
    )
    .addOption(
      new Option('--logprob-form <form>', "--openai-stub: how logprobs write a token: text (decoded, vLLM's V1 engine), token-id (token_id:N, --return-tokens-as-token-ids), piece (the vocabulary piece); default text")
        .choices(STUB_LOGPROB_FORMS),
    )
    .addOption(
      new Option('--reasoning-tokens <n|all>', "--openai-stub: chat responses stream their first n tokens as reasoning (delta.reasoning_content), the rest as content; all: reasoning only (default 0)").argParser(
        reasoningTokens,
      ),
    )
    .addOption(new Option('--reasoning-field <name>', '--openai-stub: the reasoning field (default reasoning_content)').choices(['reasoning_content', 'reasoning']));
}

/** startOpenAiStub's options from the parsed values; a named variable that is unset is a SettingsError (exit 2). */
export function openAiStubOptionsFromCli(
  values: OpenAiStubCliValues,
  address: ServeAddress,
  env: Readonly<Record<string, string | undefined>> = process.env,
): OpenAiStubOptions {
  const options: OpenAiStubOptions = {
    ...address,
    ttftMs: values.ttftMs ?? OPENAI_STUB_DEFAULT_TTFT_MS,
    tpotMs: values.tpotMs ?? OPENAI_STUB_DEFAULT_TPOT_MS,
  };
  if (values.stubModel !== undefined) {
    if (values.stubModel.length === 0 || /[\u0000-\u001f\u007f]/.test(values.stubModel)) {
      throw new SettingsError('--stub-model', values.stubModel, `--stub-model must be a non-empty printable name, got '${echo(values.stubModel)}'.`);
    }
    options.model = values.stubModel;
  }
  if (values.stubMaxTokens !== undefined) options.defaultMaxTokens = values.stubMaxTokens;
  if (values.usage === false) options.usage = false;
  if (values.stubSpinMs !== undefined) options.timerSpinMs = values.stubSpinMs;
  if (values.tokenIds === false) options.tokenIds = false;
  if (values.sglangIncremental === true) options.sglangIncremental = true;
  if (values.logprobForm !== undefined) options.logprobForm = values.logprobForm;
  if (values.reasoningTokens !== undefined) options.reasoningTokens = values.reasoningTokens;
  if (values.reasoningField !== undefined) options.reasoningField = values.reasoningField;
  if (values.stubApiKeyEnv !== undefined) {
    const key = env[values.stubApiKeyEnv];
    // The variable's name may be echoed; its value never is.
    if (key === undefined || key.length === 0) {
      throw new SettingsError('--stub-api-key-env', values.stubApiKeyEnv, `--stub-api-key-env: the environment variable '${echo(values.stubApiKeyEnv)}' is not set or empty.`);
    }
    options.apiKey = key;
  }
  return options;
}

/**
 * --stub-tokenizer's file loaded (a TokenizerError, exit 2, names the file
 * and what is wrong with it); undefined without the option.
 */
export async function openAiStubTokenizerFromCli(values: OpenAiStubCliValues): Promise<OpenAiStubOptions['tokenizer']> {
  return values.stubTokenizer === undefined ? undefined : loadTokenizer(values.stubTokenizer);
}
