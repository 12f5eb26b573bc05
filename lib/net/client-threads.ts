/**
 * clientThreads 'auto' (the default): as many client threads as the request
 * rate needs, up to the cores left beside the issue thread (and beside the
 * JS thread when it reads every body). One thread is the cheapest whenever it
 * suffices: the issue thread then reads the responses inline, with no wake of
 * a second thread per response; more threads pay only where cores are free
 * for them (benchmarks/RESULTS.md, "Issue 26, continued": on one CPU a second
 * thread cost 4.6 µs a request and raised p99 from 0.36 to 1.8 ms).
 */

/**
 * The request rate one client thread is planned for: one thread read,
 * stamped and completed 47-55 k requests/s here with JS reading every body
 * on the same CPU (the confirmed bench peaks), so 40 k leaves it headroom.
 */
export const AUTO_REQUESTS_PER_THREAD = 40_000;

export interface ClientThreadsChoice {
  threads: number;
  /** How the number was chosen, for the report ('' when it was given). */
  note: string;
}

export interface AutoClientThreadsInput {
  /** The rate the SUT will be driven at (requests/s); undefined: not known. */
  targetQps: number | undefined;
  /** The CPUs this process may run on. */
  cores: number;
  /** JS reads every response's body (readEveryResponse): the JS thread needs a core too. */
  jsReadsBodies: boolean;
  /** Each client thread owns at least one connection per node. */
  connections: number;
  /** The native client's limit (tables.maxClientThreads). */
  max: number;
}

function rateText(qps: number): string {
  return qps >= 100 ? Math.round(qps).toLocaleString('en-US') : String(Number(qps.toPrecision(3)));
}

/** The 'auto' choice: ceil(rate / AUTO_REQUESTS_PER_THREAD), at most the free cores, the connections and the limit; at least 1. */
export function autoClientThreads(input: AutoClientThreadsInput): ClientThreadsChoice {
  const others = input.jsReadsBodies ? 'the issue thread and the JS thread' : 'the issue thread';
  const free = Math.max(1, Math.floor(input.cores) - (input.jsReadsBodies ? 2 : 1));
  const freeText = `${free} core${free === 1 ? '' : 's'} free beside ${others}`;
  if (input.targetQps === undefined || !Number.isFinite(input.targetQps) || input.targetQps <= 0)
    return { threads: 1, note: 'auto: no target rate was given (targetQps), so one' };
  const needed = Math.ceil(input.targetQps / AUTO_REQUESTS_PER_THREAD);
  const threads = Math.max(1, Math.min(needed, free, input.connections, input.max));
  const limits: string[] = [];
  if (threads < needed) {
    if (threads === free) limits.push(freeText);
    if (threads === input.connections) limits.push(`connections ${input.connections}`);
    if (threads === input.max) limits.push(`the limit of ${input.max}`);
  }
  const need = `${rateText(input.targetQps)} requests/s needs ${needed} at ${rateText(AUTO_REQUESTS_PER_THREAD)}/s each`;
  return { threads, note: limits.length > 0 ? `auto: ${need}; ${limits.join(', ')}` : `auto: ${need}` };
}
