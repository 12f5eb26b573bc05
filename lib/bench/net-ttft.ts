/**
 * The token row of `loadgen bench --network`: TTFT and TPOT against the
 * OpenAI stub streamer's schedule at 20 requests/s (the stub in its own
 * process on the server's CPUs, the client on the client's), the stub's own
 * lateness, the idle round trip under it (the floor), and the client's own
 * TTFT error request by request (its TTFT − the stub's hold of that request).
 */
import { groupByIndex, pairInOrder } from './group.js';
import { median } from './median.js';
import { idleRoundTripNs, startServer, type BenchServer } from './net-servers.js';
import { runTrial, type NetTokensTrial } from './trials.js';

export interface TokenRow {
  targetQps: number;
  ttftMs: number;
  tpotMs: number;
  outputTokens: number;
  valid: boolean;
  /** The transport 'auto' picked for the OpenAI SUT (native on plain http:; absent in older reports: undici). */
  transport?: 'native' | 'undici';
  /** Measured TTFT − ttftMs (percentiles shift with the schedule: p − ttftMs). */
  ttftErrorNs: { p50: number; p99: number };
  /** Measured TPOT − tpotMs. */
  tpotErrorNs: { p50: number; p99: number };
  /** The stub's own lateness against its schedule (its timers), medians over the repetitions: part of the error above. */
  stubLatenessNs: { requests: number; ttft: { p50: number; p99: number }; tpot: { p50: number; p99: number } } | null;
  /** The stub's timerSpinMs: it waits the last this-many ms before each token in setImmediate turns, not a timer. */
  stubTimerSpinMs: number;
  /** The unmeasured run before each measured one (JIT, connections). */
  warmupMs: number;
  /**
   * The client process (and the floor's) ran on the client CPUs, the stub on the server's; false: any CPU
   * (pinning needs Linux, 2 CPUs and taskset). Older reports: always false.
   */
  clientPinned: boolean;
  /** Scheduled -> in the SUT's issueQuery, medians over the repetitions: part of every TTFT; null when not reported. */
  deliveryLagNs: { p50: number; p99: number } | null;
  /**
   * The floor under the TTFT error: a 1-byte TCP round trip from the client's CPUs (any CPU when not pinned)
   * to an echo on the stub's CPU after an idle gap of a request's mean interval (both
   * wake-ups a first token pays, with no HTTP or loadgen), `count` round trips (absent in older
   * reports: 100); null when it could not run.
   */
  floorNs: { gapMs: number; count?: number; p50: number; p99: number } | null;
  /**
   * The client's own TTFT error, request by request: its TTFT − the stub's hold of the same
   * request (first token sent − request received; clientTtftError), so the stub's timers
   * leave it and what is left is what the floor measures (both trips) and the issue path.
   * The repetitions' pairs pooled (older reports: medians over the repetitions, the counts
   * the last one's); `matched` of `requests` paired. Absent in older reports; null when the
   * stub or the run gave no stamps.
   */
  clientTtftErrorNs?: { p50: number; p99: number; matched: number; requests: number } | null;
}

/** Each measured run of the token row (not --tiny): 600 requests at 20/s. */
const TOKEN_RUN_MS = 30_000;

/** The stub's schedule is exact to microseconds when it has its CPU: a timer to 1 ms before each token, then setImmediate turns. */
const STUB_TIMER_SPIN_MS = 1;


/**
 * Pairs each request's TTFT (the client's, [QSL index, ns] in scheduled order)
 * with the stub's hold of it ([QSL index, first token sent − received] in
 * arrival order): per index, the k-th with the k-th (an index whose counts
 * differ is left out). Returns TTFT − hold of each pair.
 */
export function clientTtftErrors(
  requests: readonly (readonly [number, number])[],
  holds: readonly (readonly [number, number])[],
): number[] {
  const errors: number[] = [];
  // Both lists are in order already (a stable sort by nothing keeps it).
  const asGiven = () => 0;
  pairInOrder(groupByIndex(requests, ([idx]) => idx), groupByIndex(holds, ([idx]) => idx), asGiven, asGiven, ([, ttft], [, hold], idx) => {
    if (idx >= 0) errors.push(ttft - hold);
  });
  return errors;
}

/**
 * The percentiles of the client's own TTFT error over one or more runs, their
 * pairs pooled (a p99 of 190 requests is their second largest: one 3-ms trip
 * moves it; pooled runs estimate it from hundreds); null when nothing paired.
 */
export function clientTtftError(
  runs: readonly { requests: readonly (readonly [number, number])[]; holds: readonly (readonly [number, number])[] }[],
): { p50: number; p99: number; matched: number; requests: number } | null {
  const errors = runs.flatMap((run) => clientTtftErrors(run.requests, run.holds));
  if (errors.length === 0) return null;
  errors.sort((a, b) => a - b);
  const at = (p: number) => errors[Math.min(errors.length - 1, Math.floor(errors.length * p))]!;
  return { p50: at(0.5), p99: at(0.99), matched: errors.length, requests: runs.reduce((sum, run) => sum + run.requests.length, 0) };
}

export interface TokenRowOptions {
  /** The stub's and the echo's CPUs, and the client's (null: not pinned). */
  serverCpus: number[] | null;
  clientCpus: number[] | null;
  tiny: boolean;
  repeat: number;
  log: (line: string) => void;
  /** Where a part that could not run says why. */
  notes: string[];
  /** Servers started here join this list (closed by the caller should a step throw). */
  started: BenchServer[];
}

/** Measures the token row; null (with a note) when the stub could not serve it. */
export async function measureTokenRow(options: TokenRowOptions): Promise<TokenRow | null> {
  const { serverCpus, tiny, repeat, log, notes, started } = options;
  const clientCpus = serverCpus !== null ? options.clientCpus : null;
  const where = clientCpus !== null ? { cpus: clientCpus } : {};
  const ttftMs = 20;
  const tpotMs = 5;
  const outputTokens = 16;
  log(`  TTFT/TPOT against the OpenAI stub (ttft ${ttftMs} ms, tpot ${tpotMs} ms) at 20 requests/s (x${repeat})`);
  try {
    const stub = await startServer('openai-stub', serverCpus, undefined, { ttftMs, tpotMs, timerSpinMs: STUB_TIMER_SPIN_MS });
    const warmupMs = tiny ? 500 : 3000;
    started.push(stub);
    const trials: NetTokensTrial[] = [];
    type StubLateness = {
      requests: number; ttftNs: { p50: number; p99: number }; tpotNs: { p50: number; p99: number }; firstTokenHolds?: [idx: number, holdNs: number][];
    };
    const lateness: StubLateness[] = [];
    for (let i = 0; i < repeat; i++) {
      await stub.ask('lateness', 'LATENESS '); // from here on
      trials.push(await runTrial<NetTokensTrial>({
        kind: 'net-tokens',
        url: stub.url,
        targetQps: 20,
        // 600 requests a run: a p99 of the 190 of a 10-s run was their second largest, one 3-ms trip
        // of the stub's CPU waking away from the client's own (RESULTS.md, "Issue 26: the token row's tail").
        durationMs: tiny ? 1000 : TOKEN_RUN_MS,
        outputTokens,
        warmupMs,
        // On the client CPUs, off the stub's: left to any CPU, the client's threads met the stub spinning
        // before its tokens on CPU 1 and a tenth of the queries went out 0.2-1.1 ms late (RESULTS.md,
        // "Issue 26: the token row"). On a machine busy with other work, pinned waits for that work
        // (TTFT error p50 4-5 ms vs 1.4-1.6 ms unpinned at load 11-13, "Issue 12: TTFT precision").
      }, where));
      lateness.push(JSON.parse(await stub.ask(`lateness ${trials[trials.length - 1]!.warmupRequests}`, 'LATENESS ')) as StubLateness);
    }
    await stub.close();
    let floorNs: TokenRow['floorNs'] = null;
    try {
      const echo = await startServer('echo', serverCpus);
      started.push(echo);
      const gapMs = 1000 / 20;
      // From the client's CPUs, as the requests went; as many round trips as one run has requests, so the
      // two p99s are read from samples alike.
      const count = tiny ? 20 : (TOKEN_RUN_MS / 1000) * 20;
      const rtt = clientCpus !== null
        ? await runTrial<{ p50: number; p99: number }>({ kind: 'net-idle-rtt', url: echo.url, gapMs, count }, where)
        : await idleRoundTripNs(echo.url, gapMs, count);
      floorNs = { gapMs, count, ...rtt };
      await echo.close();
    } catch (error) {
      notes.push(`TTFT floor: ${(error as Error).message.split('\n')[0]}`);
    }
    const clientRuns = trials.map((t, i) => ({ requests: t.requests, holds: lateness[i]?.firstTokenHolds }));
    const lm = (get: (l: StubLateness) => number) => median(lateness.map(get));
    const m = (get: (t: NetTokensTrial) => number) => median(trials.map(get));
    return {
      targetQps: 20,
      ttftMs,
      tpotMs,
      outputTokens,
      valid: trials.every((t) => t.valid),
      transport: trials[0]!.transport,
      ttftErrorNs: { p50: m((t) => t.ttftNs.p50) - ttftMs * 1e6, p99: m((t) => t.ttftNs.p99) - ttftMs * 1e6 },
      tpotErrorNs: { p50: m((t) => t.tpotNs.p50) - tpotMs * 1e6, p99: m((t) => t.tpotNs.p99) - tpotMs * 1e6 },
      stubLatenessNs: lateness.length
        ? {
            requests: lm((l) => l.requests),
            ttft: { p50: lm((l) => l.ttftNs.p50), p99: lm((l) => l.ttftNs.p99) },
            tpot: { p50: lm((l) => l.tpotNs.p50), p99: lm((l) => l.tpotNs.p99) },
          }
        : null,
      stubTimerSpinMs: STUB_TIMER_SPIN_MS,
      warmupMs,
      clientPinned: clientCpus !== null,
      deliveryLagNs: trials.every((t) => t.deliveryLagNs)
        ? { p50: m((t) => t.deliveryLagNs!.p50), p99: m((t) => t.deliveryLagNs!.p99) }
        : null,
      floorNs,
      clientTtftErrorNs: clientRuns.every((run) => run.holds !== undefined)
        ? clientTtftError(clientRuns.map((run) => ({ requests: run.requests, holds: run.holds! })))
        : null,
    };
  } catch (error) {
    notes.push(`TTFT/TPOT: ${(error as Error).message.split('\n')[0]}`);
    log(`    ${(error as Error).message}`);
    return null;
  }
}
