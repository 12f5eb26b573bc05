/**
 * Error classes with stable `code`s. Every error loadgen raises is one of
 * these (argument checks aside: TypeError, RangeError). The native addon
 * throws BusyError, NotRunningError and SettingsError itself: the loader
 * hands it these classes (lib/native/loader.ts, bindings/errors.cc).
 */

/** Base class of every loadgen error. */
export class LoadgenError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A setting (test or log setting, CLI `--set`, config value) is invalid. */
export class SettingsError extends LoadgenError {
  /** The offending key, as the user wrote it (camelCase or snake_case). */
  readonly key: string;
  /** The offending value, as given. */
  readonly value: unknown;
  /** `code`: a subclass's own stable code (e.g. {@link TokenizerError}); a plain setting's is ERR_LOADGEN_INVALID_SETTING. */
  constructor(key: string, value: unknown, message: string, options?: { code?: string; cause?: unknown }) {
    super(options?.code ?? 'ERR_LOADGEN_INVALID_SETTING', message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.key = key;
    this.value = value;
  }
}

/** One problem found in a config file (mlperf.conf, user.conf, audit.config). */
export interface ConfigProblem {
  readonly severity: 'error' | 'warning';
  /** File path or name. */
  readonly file: string;
  /** 1-based line; 0 when the problem concerns the whole file. */
  readonly line: number;
  /** The config key as written (e.g. `resnet50.Server.target_qps`). */
  readonly key: string;
  /** The value as written. */
  readonly value: unknown;
  /** The problem alone. */
  readonly text: string;
  /** `<file>:<line>: <key> = <value>: <problem and what is allowed>`. */
  readonly message: string;
}

/** Most problems a {@link ConfigFileError}'s message lists. */
const CONFIG_PROBLEMS_LISTED = 20;

/**
 * Config files that loadgen refuses (strict mode): a {@link SettingsError}
 * whose key, value, file and line are the first problem's; the message lists
 * every problem, one per line.
 */
export class ConfigFileError extends SettingsError {
  readonly file: string;
  readonly line: number;
  readonly problems: readonly ConfigProblem[];
  constructor(problems: readonly ConfigProblem[]) {
    const first = problems[0]!;
    // A file of a million bad lines must not make a message of a million lines.
    const listed = problems.slice(0, CONFIG_PROBLEMS_LISTED).map((p) => p.message);
    const more = problems.length - listed.length;
    if (more > 0) listed.push(`\u2026 and ${more} more problems (ConfigFileError.problems lists them all)`);
    super(first.key, first.value, listed.join('\n'));
    this.file = first.file;
    this.line = first.line;
    this.problems = problems;
  }
}

/**
 * A data set file is refused (e.g. the OpenAI SUT's JSONL): a {@link SettingsError}
 * of the `dataset` option whose message names the file, the line, the field
 * and what is allowed. Raised before any query is issued (CLI exit 2).
 */
export class DatasetError extends SettingsError {
  readonly file: string;
  /** 1-based line; 0 when the problem concerns the whole file. */
  readonly line: number;
  /** The field of the line, e.g. 'max_tokens' ('' for the line or file as a whole). */
  readonly field: string;
  constructor(file: string, line: number, field: string, message: string) {
    super('dataset', file, message);
    this.file = file;
    this.line = line;
    this.field = field;
  }
}

/** The SUT or QSL object handed to startTest is malformed. */
export class InterfaceError extends LoadgenError {
  constructor(message: string) {
    super('ERR_LOADGEN_INVALID_INTERFACE', message);
  }
}

/** A test is already running (or about to) in this process: one at a time, whatever the thread. */
export class BusyError extends LoadgenError {
  constructor(message: string) {
    super('ERR_LOADGEN_BUSY', message);
  }
}

/** No test is running where a call needs one (e.g. finishing a run that was not started). */
export class NotRunningError extends LoadgenError {
  constructor(message: string) {
    super('ERR_LOADGEN_NOT_RUNNING', message);
  }
}

/** The SUT or QSL threw or rejected during a run; `cause` is what it threw, `result` the partial result. */
export class SutError extends LoadgenError {
  readonly result: unknown;
  constructor(message: string, cause: unknown, result: unknown) {
    super('ERR_LOADGEN_SUT_FAILED', message, { cause });
    this.result = result;
  }
}

/** The run ended without a result (the core aborted it before any summary). */
export class RunFailedError extends LoadgenError {
  constructor(message: string) {
    super('ERR_LOADGEN_RUN_FAILED', message);
  }
}

/** The built-in demo (`loadgen run` without a SUT) failed: its model's inference, or reading its accuracy log. */
export class DemoError extends LoadgenError {
  constructor(code: 'ERR_LOADGEN_DEMO_INFERENCE' | 'ERR_LOADGEN_DEMO_ACCURACY', message: string) {
    super(code, message);
  }
}

/** The native addon could not be loaded. */
export class NativeLoadError extends LoadgenError {
  constructor(message: string, cause?: unknown) {
    super('ERR_LOADGEN_NATIVE_LOAD', message, { cause });
  }
}

/** Writing the logs failed (e.g. the output directory cannot be created). */
export class LogOutputError extends LoadgenError {
  constructor(message: string, cause?: unknown) {
    super('ERR_LOADGEN_LOG_OUTPUT', message, { cause });
  }
}

/**
 * A network SUT could not be set up before the run: a bad `--url`, a node
 * that is down, not ready or does not serve the model (CLI exit 2). No query
 * was issued. `url` is the node's URL without credentials, when one is meant.
 */
export class NetworkSetupError extends LoadgenError {
  readonly url: string | undefined;
  constructor(message: string, options?: { cause?: unknown; url?: string }) {
    super('ERR_LOADGEN_NETWORK_SETUP', message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.url = options?.url;
  }
}

/** What was wrong with a tokenizer file, or with token ids given to it (TokenizerError.problem). */
export type TokenizerProblem =
  /** The file does not exist (or is not a file). */
  | 'missing'
  /** The file exists but could not be read (permissions, I/O). */
  | 'unreadable'
  /** The file is not JSON. */
  | 'not-json'
  /** The file is JSON but not a Hugging Face tokenizer.json (no model, vocabulary or merges where they belong). */
  | 'not-tokenizer'
  /** A tokenizer.json whose model, normalizer, pre-tokenizer, post-processor or decoder type is not supported. */
  | 'unsupported'
  /** A token id that the tokenizer has no token for (decode), or that is not a non-negative integer. */
  | 'invalid-id';

/**
 * A tokenizer file is refused (`--tokenizer FILE`: missing, not JSON, not a
 * tokenizer.json, an unsupported model), or token ids are refused (an id
 * the vocabulary has no token for). A {@link SettingsError} of the
 * `tokenizer` option (CLI exit 2) with its own code; the message names the
 * file, what was wrong and what is supported.
 */
export class TokenizerError extends SettingsError {
  readonly file: string;
  readonly problem: TokenizerProblem;
  constructor(file: string, problem: TokenizerProblem, message: string, options?: { cause?: unknown }) {
    super('tokenizer', file, message, { code: 'ERR_LOADGEN_TOKENIZER', ...(options?.cause !== undefined ? { cause: options.cause } : {}) });
    this.file = file;
    this.problem = problem;
  }
}
