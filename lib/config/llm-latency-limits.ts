/**
 * The TTFT/TPOT limits MLCommons' submission checker holds LLM results to
 * (mlcommons/inference tools/submission/submission_checker/constants.py,
 * LLM_LATENCY_LIMITS, as of its 2026-08 revision): per benchmark, one pair
 * for the Server scenario and one for the Interactive one. The checker
 * compares the detail log's `result_first_token_99.00_percentile_latency_ns`
 * and `result_time_per_output_token_99.00_percentile_ns` with them, each
 * strictly below its limit (performance_check.py, llm_check).
 *
 * LoadGen knows no Interactive scenario: an Interactive result is a Server
 * run of the `-interactive` model of mlperf.conf (llama3_1-8b-interactive
 * ...), whose ttft_latency / tpot_latency are the Interactive limits.
 */

/** The checker's two LLM scenarios. */
export type LlmLimitScenario = 'Server' | 'Interactive';

/** One entry of the checker's table. */
export interface LlmLatencyLimits {
  /** The benchmark as the checker names it (e.g. llama3.1-8b, llama2-70b-99). */
  readonly benchmark: string;
  readonly scenario: LlmLimitScenario;
  readonly ttftNs: number;
  readonly tpotNs: number;
}

const MS = 1_000_000;

/** LLM_LATENCY_LIMITS, one row per benchmark and scenario, in ns. */
export const LLM_LATENCY_LIMITS: readonly LlmLatencyLimits[] = [
  { benchmark: 'llama2-70b-99', scenario: 'Server', ttftNs: 2000 * MS, tpotNs: 200 * MS },
  { benchmark: 'llama2-70b-99', scenario: 'Interactive', ttftNs: 450 * MS, tpotNs: 40 * MS },
  { benchmark: 'llama2-70b-99.9', scenario: 'Server', ttftNs: 2000 * MS, tpotNs: 200 * MS },
  { benchmark: 'llama2-70b-99.9', scenario: 'Interactive', ttftNs: 450 * MS, tpotNs: 40 * MS },
  // v5.0's names for the Interactive variant (a Server entry holding the Interactive limits).
  { benchmark: 'llama2-70b-interactive-99', scenario: 'Server', ttftNs: 450 * MS, tpotNs: 40 * MS },
  { benchmark: 'llama2-70b-interactive-99.9', scenario: 'Server', ttftNs: 450 * MS, tpotNs: 40 * MS },
  { benchmark: 'mixtral-8x7b', scenario: 'Server', ttftNs: 2000 * MS, tpotNs: 200 * MS },
  { benchmark: 'llama3.1-405b', scenario: 'Server', ttftNs: 6000 * MS, tpotNs: 175 * MS },
  { benchmark: 'llama3.1-405b', scenario: 'Interactive', ttftNs: 4500 * MS, tpotNs: 80 * MS },
  { benchmark: 'llama3.1-8b', scenario: 'Server', ttftNs: 2000 * MS, tpotNs: 100 * MS },
  { benchmark: 'llama3.1-8b', scenario: 'Interactive', ttftNs: 500 * MS, tpotNs: 30 * MS },
  { benchmark: 'deepseek-r1', scenario: 'Server', ttftNs: 2000 * MS, tpotNs: 80 * MS },
  { benchmark: 'deepseek-r1', scenario: 'Interactive', ttftNs: 1500 * MS, tpotNs: 15 * MS },
  { benchmark: 'gpt-oss-120b', scenario: 'Server', ttftNs: 3000 * MS, tpotNs: 80 * MS },
  { benchmark: 'gpt-oss-120b', scenario: 'Interactive', ttftNs: 2000 * MS, tpotNs: 15 * MS },
];

/** Where the checker's table names come from, for messages. */
export const LLM_LIMITS_SOURCE = "MLCommons' submission checker (LLM_LATENCY_LIMITS in tools/submission/submission_checker/constants.py)";

/**
 * mlperf.conf's model names (and the checker's folder names, which a
 * submission's results/<system>/<benchmark>/ path uses) -> the checker's
 * benchmark. mlperf.conf's llama2-70b stands for both accuracy targets
 * (-99, -99.9), whose limits are the same: the -99 entry answers for both.
 */
const CONF_TO_CHECKER: Readonly<Record<string, string>> = {
  'llama2-70b': 'llama2-70b-99',
  'llama2-70b-interactive': 'llama2-70b-99',
  'llama3_1-405b': 'llama3.1-405b',
  'llama3_1-405b-interactive': 'llama3.1-405b',
  'llama3_1-8b': 'llama3.1-8b',
  'llama3_1-8b-interactive': 'llama3.1-8b',
  'deepseek-r1-interactive': 'deepseek-r1',
  'gpt-oss-120b-interactive': 'gpt-oss-120b',
};

/** The checker's names -> mlperf.conf's model name (the Server variant). */
const CHECKER_TO_CONF: Readonly<Record<string, string>> = {
  'llama2-70b-99': 'llama2-70b',
  'llama2-70b-99.9': 'llama2-70b',
  'llama2-70b-interactive-99': 'llama2-70b-interactive',
  'llama2-70b-interactive-99.9': 'llama2-70b-interactive',
  'llama3.1-405b': 'llama3_1-405b',
  'llama3.1-8b': 'llama3_1-8b',
};

/** True for an mlperf.conf model name of an Interactive variant. */
export function isInteractiveModel(model: string): boolean {
  return model.endsWith('-interactive') || /-interactive-99(\.9)?$/.test(model);
}

/**
 * mlperf.conf's model name for a benchmark folder the checker names (e.g.
 * results/<system>/llama3.1-8b/Interactive/...): the `-interactive` model
 * for an Interactive folder. Undefined for a name that needs no mapping.
 */
export function confModelOf(name: string, interactive: boolean): string | undefined {
  const conf = CHECKER_TO_CONF[name];
  if (conf === undefined) return undefined;
  return interactive && !isInteractiveModel(conf) ? `${conf}-interactive` : conf;
}

/** The checker's benchmark name of an mlperf.conf (or checker) model name; undefined when its table has none. */
export function limitsBenchmarkOf(model: string): string | undefined {
  const name = CONF_TO_CHECKER[model] ?? model;
  return LLM_LATENCY_LIMITS.some((l) => l.benchmark === name) ? name : undefined;
}

/**
 * The limits a run of `model` (mlperf.conf's name, or the checker's) in
 * LoadGen's `scenario` is held to: an `-interactive` model's Server run, or a
 * run the checker files under Interactive (`interactive`), is held to the
 * Interactive limits. Undefined when the table has none (not an LLM
 * benchmark with limits, or a scenario other than Server).
 */
export function limitsFor(model: string, scenario: string, interactive = false): LlmLatencyLimits | undefined {
  if (scenario !== 'Server' && scenario !== 'Interactive') return undefined;
  const benchmark = limitsBenchmarkOf(model);
  if (benchmark === undefined) return undefined;
  // v5.0's llama2-70b-interactive-99(.9) have one Server entry holding the Interactive limits.
  if (benchmark.includes('-interactive')) return LLM_LATENCY_LIMITS.find((l) => l.benchmark === benchmark);
  const wanted: LlmLimitScenario = interactive || scenario === 'Interactive' || isInteractiveModel(model) ? 'Interactive' : 'Server';
  return LLM_LATENCY_LIMITS.find((l) => l.benchmark === benchmark && l.scenario === wanted);
}

/** '500 ms' for 500000000 ns. */
export function limitMs(ns: number): string {
  return `${ns / MS} ms`;
}
