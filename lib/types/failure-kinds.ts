/**
 * The kinds of a failed sample, shared by the network protocols (lib/net/protocol)
 * and the result (TestResult.failedSamples).
 */

/**
 * How a sample failed: counted by kind in result.errors and the summary.
 * 'no_first_token': the response ended well formed but carried no generated
 * output, so a run measuring token latencies has no first token to time.
 */
export type FailureKind = 'http_status' | 'connection' | 'malformed_response' | 'timeout' | 'cancelled' | 'no_first_token';

/**
 * Every FailureKind, in the core's order (native/failure_kinds.h declares
 * them; test/native-tables.test.ts fails if the two drift).
 */
export const FAILURE_KINDS = ['http_status', 'connection', 'malformed_response', 'timeout', 'cancelled', 'no_first_token'] as const satisfies readonly FailureKind[];
// Compiles only while the list names every kind of the union (`satisfies`: and no other).
const everyKindListed: [Exclude<FailureKind, (typeof FAILURE_KINDS)[number]>] extends [never] ? true : never = true;
void everyKindListed;
