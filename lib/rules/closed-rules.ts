/**
 * The one list of run rules `loadgen check` applies (seeds/000 and the
 * submission checker's reading of the detail log, spec/50 §7.2). Each rule
 * compares a run's settings with what the official mlperf.conf gives the same
 * model and scenario (`official`), so the numbers are the rules' own.
 */
import { limitMs, type LlmLatencyLimits } from '../config/llm-latency-limits.js';
import { type Benchmark, suitesRequiring } from './benchmarks.js';
import { factFlag, factNumber, factSeed, type FactValue, type RunFacts } from './facts.js';

/** `closed`: the closed division; `open` relaxes model-specific bounds (seeds/000 "Open Division"). */
export type Division = 'closed' | 'open';
export const DIVISIONS: readonly Division[] = ['closed', 'open'];

/** Which kind of run is checked: a normal run, or a compliance test's (audit.config) run. */
export type RunKind = 'run' | 'TEST01' | 'TEST04';

/** One way a run breaks a rule. */
export interface RuleViolation {
  /** The rule's id (see {@link RUN_RULES}). */
  readonly rule: string;
  /** The setting or log key at fault, by its reference name. */
  readonly setting: string;
  /** Its value, as text. */
  readonly value: string;
  /** What the rules require, as text. */
  readonly required: string;
  /** One sentence naming all of the above (and where the value came from, when known). */
  readonly message: string;
}

/** What a rule sees. */
export interface RuleContext {
  readonly model: string;
  readonly division: Division;
  readonly kind: RunKind;
  readonly facts: RunFacts;
  /** The same model and scenario under the built-in mlperf.conf alone, same QSL counts. */
  readonly official: RunFacts;
  /** The rules' suite table entry, when the model has one. */
  readonly benchmark?: Benchmark;
  /** A compliance test's run: the normal run it is compared with. */
  readonly reference?: RunFacts;
  /** An LLM benchmark's TTFT/TPOT limits in the submission checker's table (Server or Interactive), when it has them. */
  readonly tokenLimits?: LlmLatencyLimits;
}

/** A rule: an id, what it holds, and its check. */
export interface RunRule {
  readonly id: string;
  readonly description: string;
  /** Divisions the rule applies to. */
  readonly divisions: readonly Division[];
  /** True when the rule applies to these facts (e.g. Server only, finished runs only). */
  applies(ctx: RuleContext): boolean;
  check(ctx: RuleContext): RuleViolation[];
}

function text(v: FactValue | undefined): string {
  return v === undefined ? '(not set)' : String(v);
}

function violation(ctx: RuleContext, rule: string, setting: string, value: FactValue | undefined, required: string): RuleViolation {
  const src = ctx.facts.sources?.get(setting);
  const from = src !== undefined && src !== 'default' ? ` (from ${src})` : '';
  return {
    rule, setting, value: text(value), required,
    message: `${rule}: ${setting} is ${text(value)}${from}; ${ctx.division === 'closed' ? 'the closed division requires' : 'the rules require'} ${required}.`,
  };
}

const LATENCY_PERCENTILE_KEY: Record<string, string> = {
  SingleStream: 'single_stream_target_latency_percentile',
  MultiStream: 'multi_stream_target_latency_percentile',
  Server: 'server_target_latency_percentile',
};

const isPerformance = (ctx: RuleContext): boolean => ctx.facts.mode === 'PerformanceOnly' || ctx.facts.mode === 'SubmissionRun';
const finished = (ctx: RuleContext): boolean => ctx.facts.results !== undefined;
const BOTH: readonly Division[] = ['closed', 'open'];
const CLOSED: readonly Division[] = ['closed'];

/** The detail-log keys the submission checker holds to the TTFT/TPOT limits (performance_check.py, llm_check). */
export const TTFT_P99_KEY = 'result_first_token_99.00_percentile_latency_ns';
export const TPOT_P99_KEY = 'result_time_per_output_token_99.00_percentile_ns';

/** TEST01's accuracy-log seed (spec/10 §5: the shipped audit.config). */
export const TEST01_ACCURACY_LOG_RNG_SEED = 720381539243781796n;

/** The detail-log key of each scenario's result (spec/50 §7.2, the checker's map). */
export const RESULT_KEY: Record<string, string> = {
  SingleStream: 'early_stopping_latency_ss',
  MultiStream: 'early_stopping_latency_ms',
  Server: 'result_completed_samples_per_sec',
  Offline: 'result_samples_per_second',
};

/** A result as a throughput (higher is better): latencies become 1e9 / ns, as TEST04's script scores them. */
function score(facts: RunFacts): number {
  const v = Number(facts.results?.[RESULT_KEY[facts.scenario]!]);
  return facts.scenario === 'SingleStream' || facts.scenario === 'MultiStream' ? 1e9 / v : v;
}

/** The compliance scripts' looser bound for short latencies: SS <= 200000 ns, MS <= 1600000 ns. */
function shortLatency(facts: RunFacts): boolean {
  const v = Number(facts.results?.[RESULT_KEY[facts.scenario]!]);
  return (facts.scenario === 'SingleStream' && v <= 200_000) || (facts.scenario === 'MultiStream' && v <= 1_600_000);
}

const compared = (kind: RunKind) => (ctx: RuleContext): boolean =>
  ctx.kind === kind && finished(ctx) && ctx.reference?.results !== undefined;

/** Every rule, in the order reports list them. */
export const RUN_RULES: readonly RunRule[] = [
  {
    id: 'scenario-required',
    description: 'the scenario is one the rules\' Datacenter or Edge suite lists for the benchmark',
    divisions: CLOSED,
    applies: (ctx) => ctx.benchmark !== undefined,
    check: (ctx) => suitesRequiring(ctx.benchmark!, ctx.facts.scenario).length > 0 ? [] : [violation(ctx, 'scenario-required', 'scenario', ctx.facts.scenario,
      `one of the scenarios the suites list for ${ctx.benchmark!.title} (${[
        ctx.benchmark!.datacenter ? `datacenter: ${ctx.benchmark!.datacenter.join(', ')}` : '',
        ctx.benchmark!.edge ? `edge: ${ctx.benchmark!.edge.join(', ')}` : '',
      ].filter(Boolean).join('; ')})`)],
  },
  {
    id: 'test-mode',
    description: 'the test mode is a submission mode (not FindPeakPerformance)',
    divisions: BOTH,
    applies: () => true,
    check: (ctx) => ctx.facts.mode === 'FindPeakPerformance'
      ? [violation(ctx, 'test-mode', 'mode', ctx.facts.mode, 'PerformanceOnly, AccuracyOnly or SubmissionRun (FindPeakPerformance only searches for a QPS)')] : [],
  },
  {
    id: 'min-duration',
    description: 'the minimum duration is at least the rules\' (600 s in every scenario)',
    divisions: BOTH,
    applies: (ctx) => isPerformance(ctx) && ctx.kind === 'run',
    check: (ctx) => {
      const need = factNumber(ctx.official.effective, 'min_duration_ms');
      const have = factNumber(ctx.facts.effective, 'min_duration_ms');
      return have >= need ? [] : [violation(ctx, 'min-duration', 'min_duration_ms', have, `at least ${need} ms`)];
    },
  },
  {
    id: 'min-query-count',
    description: 'the minimum query count (Offline: samples in the query) is at least mlperf.conf\'s',
    divisions: BOTH,
    applies: (ctx) => isPerformance(ctx) && ctx.kind === 'run',
    check: (ctx) => {
      if (ctx.facts.scenario === 'Offline') {
        // Offline issues one query; its size is max(min_query_count, 1.1 * duration * QPS) (spec/10 §3).
        const need = factNumber(ctx.official.requested, 'min_query_count');
        const have = factNumber(ctx.facts.effective, 'samples_per_query');
        return have >= need ? [] : [violation(ctx, 'min-query-count', 'samples_per_query', have, `at least ${need} samples in the Offline query (min_query_count)`)];
      }
      const need = factNumber(ctx.official.effective, 'min_query_count');
      const have = factNumber(ctx.facts.effective, 'min_query_count');
      return have >= need ? [] : [violation(ctx, 'min-query-count', 'min_query_count', have, `at least ${need} queries`)];
    },
  },
  {
    id: 'early-out',
    description: 'no max_duration_ms / max_query_count stops the run before the minimums',
    divisions: BOTH,
    applies: (ctx) => isPerformance(ctx) && ctx.kind === 'run',
    check: (ctx) => {
      const out: RuleViolation[] = [];
      const maxMs = factNumber(ctx.facts.effective, 'max_duration_ms');
      const minMs = factNumber(ctx.official.effective, 'min_duration_ms');
      if (maxMs > 0 && maxMs < minMs) out.push(violation(ctx, 'early-out', 'max_duration_ms', maxMs, `0 (no limit) or at least ${minMs} ms`));
      const maxQ = factNumber(ctx.facts.effective, 'max_query_count');
      const minQ = ctx.facts.scenario === 'Offline' ? 1 : factNumber(ctx.official.effective, 'min_query_count');
      if (maxQ > 0 && maxQ < minQ) out.push(violation(ctx, 'early-out', 'max_query_count', maxQ, `0 (no limit) or at least ${minQ} queries`));
      return out;
    },
  },
  {
    id: 'official-seeds',
    description: 'the RNG seeds are the official ones of mlperf.conf',
    divisions: BOTH,
    applies: () => true,
    check: (ctx) => ['qsl_rng_seed', 'sample_index_rng_seed', 'schedule_rng_seed'].flatMap((key) => {
      const need = factSeed(ctx.official.effective, key);
      const have = factSeed(ctx.facts.effective, key);
      return need !== undefined && have === need ? [] : [violation(ctx, 'official-seeds', key, have, `the official seed ${text(need)} (mlperf.conf)`)];
    }),
  },
  {
    id: 'latency-bound',
    description: 'Server: the latency bound is not looser than the benchmark\'s (mlperf.conf target_latency, or TTFT/TPOT for token benchmarks)',
    divisions: CLOSED,
    applies: (ctx) => ctx.facts.scenario === 'Server' && isPerformance(ctx),
    check: (ctx) => {
      if (factFlag(ctx.official.effective, 'use_token_latencies')) {
        const out: RuleViolation[] = [];
        if (!factFlag(ctx.facts.effective, 'use_token_latencies')) {
          out.push(violation(ctx, 'latency-bound', 'use_token_latencies', false, 'true: this benchmark is held to TTFT/TPOT bounds'));
        }
        for (const key of ['server_ttft_latency', 'server_tpot_latency']) {
          const need = factNumber(ctx.official.effective, key);
          const have = factNumber(ctx.facts.effective, key);
          if (!(have <= need)) out.push(violation(ctx, 'latency-bound', key, have, `at most ${need} ns (the benchmark's bound)`));
        }
        return out;
      }
      const need = factNumber(ctx.official.effective, 'target_latency_ns');
      const have = factNumber(ctx.facts.effective, 'target_latency_ns');
      return have <= need && have > 0 ? [] : [violation(ctx, 'latency-bound', 'server_target_latency_ns', have, `at most ${need} ns (the benchmark's bound)`)];
    },
  },
  {
    id: 'token-latency-p99',
    description: 'a finished Server run of an LLM benchmark: its 99th-percentile TTFT and TPOT are each below the submission checker\'s limit (the keys its llm_check reads)',
    divisions: CLOSED,
    applies: (ctx) => ctx.tokenLimits !== undefined && ctx.facts.scenario === 'Server' && finished(ctx) && isPerformance(ctx),
    check: (ctx) => {
      const limits = ctx.tokenLimits!;
      const out: RuleViolation[] = [];
      for (const [key, need, name] of [[TTFT_P99_KEY, limits.ttftNs, 'TTFT'], [TPOT_P99_KEY, limits.tpotNs, 'TPOT']] as const) {
        const raw = ctx.facts.results![key];
        const have = typeof raw === 'number' ? raw : Number.NaN;
        // The checker: `ttft < limit and tpot < limit`, strictly; a missing key fails.
        if (!(have < need)) {
          out.push(violation(ctx, 'token-latency-p99', key, raw === undefined ? '(missing)' : String(raw),
            `below ${need} ns (${limits.benchmark} ${limits.scenario}: ${name} under ${limitMs(need)})`));
        }
      }
      return out;
    },
  },
  {
    id: 'latency-percentile',
    description: 'the target latency percentile is the scenario\'s (SingleStream 90, MultiStream 99, Server 99)',
    divisions: CLOSED,
    applies: (ctx) => ctx.facts.scenario !== 'Offline',
    check: (ctx) => {
      const need = factNumber(ctx.official.effective, 'target_latency_percentile');
      const have = factNumber(ctx.facts.effective, 'target_latency_percentile');
      return have === need ? [] : [violation(ctx, 'latency-percentile', LATENCY_PERCENTILE_KEY[ctx.facts.scenario]!, have, `exactly ${need}`)];
    },
  },
  {
    id: 'performance-sample-count',
    description: 'the performance sample count is at least the rules\' QSL size (mlperf.conf performance_sample_count_override; 0 there: the whole data set)',
    divisions: CLOSED,
    applies: (ctx) => ctx.kind === 'run',
    check: (ctx) => {
      const override = factNumber(ctx.official.requested, 'performance_sample_count_override');
      const need = override > 0 ? override : ctx.facts.qslTotal;
      const have = factNumber(ctx.facts.effective, 'performance_sample_count');
      return have >= need ? [] : [violation(ctx, 'performance-sample-count', 'performance_sample_count', have,
        override > 0 ? `at least ${need} samples (the benchmark's QSL size)` : `the whole data set: ${need} samples`)];
    },
  },
  {
    id: 'data-set-size',
    description: 'the data set (the QSL\'s total sample count) holds at least the rules\' QSL size',
    divisions: CLOSED,
    applies: (ctx) => factNumber(ctx.official.requested, 'performance_sample_count_override') > 0,
    check: (ctx) => {
      const need = factNumber(ctx.official.requested, 'performance_sample_count_override');
      return ctx.facts.qslTotal >= need ? [] : [violation(ctx, 'data-set-size', 'total_sample_count', ctx.facts.qslTotal, `at least ${need} samples (the benchmark's QSL size)`)];
    },
  },
  {
    id: 'accuracy-sample-count',
    description: 'the accuracy run covers the whole data set (accuracy_sample_count_override as mlperf.conf sets it)',
    divisions: BOTH,
    applies: (ctx) => ctx.kind === 'run' && ctx.facts.mode !== 'PerformanceOnly',
    check: (ctx) => {
      const need = factNumber(ctx.official.effective, 'accuracy_sample_count');
      const have = factNumber(ctx.facts.effective, 'accuracy_sample_count');
      return have === need ? [] : [violation(ctx, 'accuracy-sample-count', 'accuracy_sample_count', have, `${need} samples (the whole data set)`)];
    },
  },
  {
    id: 'accuracy-log-off',
    description: 'a performance run samples no responses into the accuracy log (only compliance tests such as TEST01 do)',
    divisions: BOTH,
    applies: (ctx) => isPerformance(ctx) && ctx.kind !== 'TEST01',
    check: (ctx) => {
      const out: RuleViolation[] = [];
      const p = factNumber(ctx.facts.effective, 'accuracy_log_probability');
      if (p > 0) out.push(violation(ctx, 'accuracy-log-off', 'accuracy_log_probability', p, '0 in a performance run'));
      const t = factNumber(ctx.facts.effective, 'accuracy_log_sampling_target');
      if (t > 0) out.push(violation(ctx, 'accuracy-log-off', 'accuracy_log_sampling_target', t, '0 in a performance run'));
      return out;
    },
  },
  {
    id: 'issue-mode',
    description: 'a normal run issues samples at random (performance_issue_same / _unique are TEST04\'s)',
    divisions: BOTH,
    applies: (ctx) => ctx.kind === 'run',
    check: (ctx) => ['performance_issue_same', 'performance_issue_unique'].flatMap((key) =>
      factFlag(ctx.facts.effective, key) ? [violation(ctx, 'issue-mode', key, true, 'false outside a TEST04 run')] : []),
  },
  {
    id: 'test01-settings',
    description: 'a TEST01 run samples the accuracy log with the audit seed in performance mode',
    divisions: BOTH,
    applies: (ctx) => ctx.kind === 'TEST01',
    check: (ctx) => {
      const out: RuleViolation[] = [];
      if (ctx.facts.mode !== 'PerformanceOnly') out.push(violation(ctx, 'test01-settings', 'mode', ctx.facts.mode, 'PerformanceOnly (TEST01 audit.config)'));
      const seed = factSeed(ctx.facts.effective, 'accuracy_log_rng_seed');
      if (seed !== TEST01_ACCURACY_LOG_RNG_SEED) out.push(violation(ctx, 'test01-settings', 'accuracy_log_rng_seed', seed, `${TEST01_ACCURACY_LOG_RNG_SEED} (TEST01 audit.config)`));
      if (!(factNumber(ctx.facts.effective, 'accuracy_log_sampling_target') > 0)) {
        out.push(violation(ctx, 'test01-settings', 'accuracy_log_sampling_target', ctx.facts.effective.accuracy_log_sampling_target, 'a positive sample target (TEST01 audit.config)'));
      }
      return out;
    },
  },
  {
    id: 'test04-settings',
    description: 'a TEST04 run issues the same sample (performance_issue_same, index 3) in performance mode',
    divisions: BOTH,
    applies: (ctx) => ctx.kind === 'TEST04',
    check: (ctx) => {
      const out: RuleViolation[] = [];
      if (ctx.facts.mode !== 'PerformanceOnly') out.push(violation(ctx, 'test04-settings', 'mode', ctx.facts.mode, 'PerformanceOnly (TEST04 audit.config)'));
      if (!factFlag(ctx.facts.effective, 'performance_issue_same')) out.push(violation(ctx, 'test04-settings', 'performance_issue_same', false, 'true (TEST04 audit.config)'));
      if (factNumber(ctx.facts.effective, 'performance_issue_same_index') !== 3) {
        out.push(violation(ctx, 'test04-settings', 'performance_issue_same_index', ctx.facts.effective.performance_issue_same_index, '3 (TEST04 audit.config)'));
      }
      return out;
    },
  },
  {
    id: 'result-valid',
    description: 'a finished performance run is VALID',
    divisions: BOTH,
    applies: (ctx) => finished(ctx) && isPerformance(ctx),
    check: (ctx) => {
      const v = ctx.facts.results!.result_validity;
      return v === 'VALID' ? [] : [violation(ctx, 'result-valid', 'result_validity', String(v ?? '(missing)'), 'VALID')];
    },
  },
  {
    id: 'early-stopping',
    description: 'a finished SingleStream, MultiStream or Server run met early stopping',
    divisions: BOTH,
    applies: (ctx) => finished(ctx) && isPerformance(ctx) && ctx.facts.scenario !== 'Offline',
    check: (ctx) => ctx.facts.results!.early_stopping_met === true ? []
      : [violation(ctx, 'early-stopping', 'early_stopping_met', String(ctx.facts.results!.early_stopping_met ?? '(missing)'), 'true')],
  },
  {
    id: 'no-errors',
    description: 'a finished run logged no errors (the checker fails a log with is_error lines)',
    divisions: BOTH,
    applies: finished,
    check: (ctx) => {
      const n = Number(ctx.facts.results!.num_errors ?? 0);
      return n === 0 ? [] : [violation(ctx, 'no-errors', 'num_errors', n, '0 errors in the detail log')];
    },
  },
  {
    id: 'test01-performance',
    description: 'TEST01\'s result is within 10 % of the run\'s (20 % for short SingleStream/MultiStream latencies), as verify_performance.py',
    divisions: BOTH,
    applies: compared('TEST01'),
    check: (ctx) => {
      const key = RESULT_KEY[ctx.facts.scenario]!;
      const ref = Number(ctx.reference!.results![key]);
      const test = Number(ctx.facts.results![key]);
      const tolerance = shortLatency(ctx.reference!) ? 0.2 : 0.1;
      const ok = Number.isFinite(ref) && ref > 0 && Number.isFinite(test) && Math.abs(test / ref - 1) <= tolerance;
      return ok ? [] : [violation(ctx, 'test01-performance', key, test, `within ${tolerance * 100} % of the run's ${ref}`)];
    },
  },
  {
    id: 'test04-performance',
    description: 'TEST04 (one sample issued again and again) is not more than 10 % faster than the run (20 % for short latencies), as verify_performance.py',
    divisions: BOTH,
    applies: compared('TEST04'),
    check: (ctx) => {
      const key = RESULT_KEY[ctx.facts.scenario]!;
      const ref = score(ctx.reference!);
      const test = score(ctx.facts);
      const tolerance = shortLatency(ctx.reference!) ? 0.2 : 0.1;
      const ok = Number.isFinite(ref) && ref > 0 && Number.isFinite(test) && test < ref * (1 + tolerance);
      return ok ? [] : [violation(ctx, 'test04-performance', key, String(ctx.facts.results![key]),
        `a score (throughput, or 1e9 / latency) below ${1 + tolerance} x the run's (${+ref.toPrecision(6)}); TEST04 scores ${+test.toPrecision(6)}: caching of repeated samples is suspected`)];
    },
  },
];
