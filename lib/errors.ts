/**
 * Error classes with stable `code`s. Every error loadgen raises is one of these.
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
  constructor(key: string, value: unknown, message: string) {
    super('ERR_LOADGEN_INVALID_SETTING', message);
    this.key = key;
    this.value = value;
  }
}

/** The SUT or QSL object handed to startTest is malformed. */
export class InterfaceError extends LoadgenError {
  constructor(message: string) {
    super('ERR_LOADGEN_INVALID_INTERFACE', message);
  }
}

/** A test is already running in this process. */
export class BusyError extends LoadgenError {
  constructor(message: string) {
    super('ERR_LOADGEN_BUSY', message);
  }
}

/** No test is running where one is required (e.g. a completion outside a run). */
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
