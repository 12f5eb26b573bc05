/**
 * SIGINT / SIGTERM while the `loadgen` command runs a test: the first one
 * stops the run through startTest's AbortSignal (the logs and report.html
 * are still written) and the command then exits 130 / 143; a second one
 * exits at once with the same code. The handlers exist only while a run
 * does: the library itself never installs any.
 */
import { EXIT_SIGINT, EXIT_SIGTERM } from './exit-codes.js';

export type RunSignalName = 'SIGINT' | 'SIGTERM';

const EXIT_CODES: Record<RunSignalName, number> = { SIGINT: EXIT_SIGINT, SIGTERM: EXIT_SIGTERM };

/** The signal handlers of one run; {@link RunSignals.dispose} removes them. */
export interface RunSignals {
  /** Aborted, with reason `Error('interrupted by SIGINT')`, on the first signal. */
  readonly signal: AbortSignal;
  /** The exit code of the first signal received (130 / 143), or undefined when none came. */
  exitCode(): number | undefined;
  /** Removes the handlers (once the run's output is written). Idempotent. */
  dispose(): void;
}

/** Installs the handlers for one run (call right before it starts). */
export function watchRunSignals(): RunSignals {
  const controller = new AbortController();
  let received: RunSignalName | undefined;
  const handlers = new Map<RunSignalName, () => void>();
  for (const name of Object.keys(EXIT_CODES) as RunSignalName[]) {
    const handler = (): void => {
      if (received !== undefined) process.exit(EXIT_CODES[received]);  // the second signal: at once
      received = name;
      process.stderr.write(`loadgen: ${name} received: stopping the run and writing its logs (again to exit at once)\n`);
      controller.abort(new Error(`interrupted by ${name}`));
    };
    handlers.set(name, handler);
    process.on(name, handler);
  }
  return {
    signal: controller.signal,
    exitCode: () => (received === undefined ? undefined : EXIT_CODES[received]),
    dispose: () => {
      for (const [name, handler] of handlers) process.off(name, handler);
      handlers.clear();
    },
  };
}

/**
 * Runs `run` (resolving with the command's exit code) with the handlers
 * installed, removed when it settles, also when it throws. Returns the exit
 * code of a signal that came meanwhile, else `run`'s. A run that refused to
 * start because the signal came first (startTest rejects with the signal's
 * reason) ends with the signal's code too.
 */
export async function runWithSignals(run: (signal: AbortSignal) => Promise<number>): Promise<number> {
  const signals = watchRunSignals();
  try {
    const code = await run(signals.signal);
    return signals.exitCode() ?? code;
  } catch (error) {
    const code = signals.exitCode();
    if (code !== undefined && error === signals.signal.reason) return code;
    throw error;
  } finally {
    signals.dispose();
  }
}
