/**
 * SIGINT / SIGTERM while the `loadgen run` command works. The handlers are
 * installed before its first phase (settings, module import, node probes,
 * data set, the QSL load, the run, the logs) and removed when it ends; the
 * first signal ends whichever phase is under way: a phase before the run
 * stops waiting at once and writes nothing (no run happened), the run stops
 * through startTest's AbortSignal with its logs and report.html written.
 * The command then exits 130 / 143; a second signal exits at once with the
 * same code. The library itself never installs any handler.
 */
import { untilAborted } from '../abortable.js';
import { messageOf } from '../api/checks.js';
import { EXIT_SIGINT, EXIT_SIGTERM } from './exit-codes.js';
import { cliSecrets } from './output-secrets.js';

export type RunSignalName = 'SIGINT' | 'SIGTERM';

const EXIT_CODES: Record<RunSignalName, number> = { SIGINT: EXIT_SIGINT, SIGTERM: EXIT_SIGTERM };

/** What the command is doing, for the note a signal prints; 'run': startTest has the signal. */
export type CommandPhase = 'setup' | 'run';

/** The signal handlers of one command; {@link RunSignals.dispose} removes them. */
export interface RunSignals {
  /** Aborted, with reason `Error('interrupted by SIGINT')`, on the first signal. */
  readonly signal: AbortSignal;
  /** The exit code of the first signal received (130 / 143), or undefined when none came. */
  exitCode(): number | undefined;
  /** Tells the handlers what a signal stops now (the note it prints). */
  enter(phase: CommandPhase): void;
  /** Removes the handlers (once the command's output is written). Idempotent. */
  dispose(): void;
}

/** Installs the handlers (call before the command's first phase). */
export function watchRunSignals(): RunSignals {
  const controller = new AbortController();
  let received: RunSignalName | undefined;
  let phase: CommandPhase = 'setup';
  const handlers = new Map<RunSignalName, () => void>();
  for (const name of Object.keys(EXIT_CODES) as RunSignalName[]) {
    const handler = (): void => {
      if (received !== undefined) process.exit(EXIT_CODES[received]);  // the second signal: at once
      received = name;
      process.stderr.write(
        phase === 'run'
          ? `loadgen: ${name} received: stopping the run and writing its logs (again to exit at once)\n`
          : `loadgen: ${name} received before the run started: stopping; no logs are written\n`,
      );
      controller.abort(new Error(`interrupted by ${name}`));
    };
    handlers.set(name, handler);
    process.on(name, handler);
  }
  return {
    signal: controller.signal,
    exitCode: () => (received === undefined ? undefined : EXIT_CODES[received]),
    enter: (next) => {
      phase = next;
    },
    dispose: () => {
      for (const [name, handler] of handlers) process.off(name, handler);
      handlers.clear();
    },
  };
}

/** The handlers of the command under way (nested runWithSignals calls share them). */
let current: RunSignals | undefined;

/**
 * Runs `run` (resolving with the command's exit code) with the handlers
 * installed, removed when it settles, also when it throws. Returns the exit
 * code of a signal that came meanwhile, else `run`'s. Once a signal came,
 * a phase that gave up because of it (its rejection is the signal's reason,
 * e.g. startTest refusing to start, or an abandoned wait) ends with the
 * signal's code too; any other error then is printed and ends with it as well.
 * Called while handlers are installed already (the demo within `loadgen
 * run`), it uses those.
 */
export async function runWithSignals(run: (signal: AbortSignal, signals: RunSignals) => Promise<number>): Promise<number> {
  const outer = current;
  const signals = outer ?? watchRunSignals();
  current = signals;
  try {
    const code = await run(signals.signal, signals);
    return signals.exitCode() ?? code;
  } catch (error) {
    const code = signals.exitCode();
    if (code === undefined) throw error;
    if (error !== signals.signal.reason && !isAbortError(error)) process.stderr.write(`loadgen: after the signal: ${cliSecrets.redact(messageOf(error))}\n`);
    return code;
  } finally {
    if (outer === undefined) {
      current = undefined;
      signals.dispose();
    }
  }
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}

/**
 * Waits for one phase of the command (a module's import, a SUT's creation,
 * the node probes) no longer than the signal allows: rejects with the
 * signal's reason at once when it comes.
 */
export function phase<T>(signal: AbortSignal, work: PromiseLike<T> | T): Promise<T> {
  return untilAborted(Promise.resolve(work), signal);
}
