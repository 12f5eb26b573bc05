/**
 * `loadgen check` before a run: the effective settings of a model and
 * scenario, derived exactly as a run derives them (loadSettings, the built-in
 * mlperf.conf, the QSL's counts), held against the run rules (closed-rules.ts).
 */
import { deriveEffectiveSettings, loadSettings } from '../config/load-settings.js';
import type { ConfigSource, LoadedSettings, SettingsLayer } from '../config/types.js';
import { SettingsError } from '../errors.js';
import { closest, show } from '../settings/messages.js';
import { SCENARIOS, TEST_MODES, type Scenario, type TestMode } from '../types/settings.js';
import { limitMs, limitsFor, LLM_LIMITS_SOURCE, type LlmLatencyLimits } from '../config/llm-latency-limits.js';
import { BENCHMARKS, benchmarkOf } from './benchmarks.js';
import { DIVISIONS, type Division, RUN_RULES, TPOT_P99_KEY, TTFT_P99_KEY, type RuleContext, type RuleViolation, type RunKind } from './closed-rules.js';
import { factNumber, type FactValue, type RunFacts } from './facts.js';

/** Options of {@link checkSettings}. */
export interface CheckSettingsOptions {
  /** Model name as mlperf.conf spells it (resnet50, bert, llama2-70b, ...). */
  readonly model: string;
  readonly scenario: Scenario;
  /** Test mode of the planned run; default PerformanceOnly. */
  readonly mode?: TestMode;
  readonly userConf?: ConfigSource;
  /** Replaces the built-in mlperf.conf (the rules are still the built-in one's). */
  readonly mlperfConf?: ConfigSource | 'builtin';
  /** Default closed. */
  readonly division?: Division;
  /** The data set's size (the QSL's total sample count); default: the benchmark's QSL size from mlperf.conf. */
  readonly totalSampleCount?: number;
  /** The QSL's performance sample count; default: min(totalSampleCount, the benchmark's QSL size). */
  readonly performanceSampleCount?: number;
  /** Settings applied after the config files (e.g. CLI --set), as a run applies them. */
  readonly overrides?: readonly SettingsLayer[];
  /** Apply config files exactly as the reference does (problems become warnings). */
  readonly lenient?: boolean;
}

/** One rule's outcome in a report. */
export interface RuleOutcome {
  readonly id: string;
  readonly description: string;
  /** `n/a`: the rule does not apply to this run (scenario, mode, division). */
  readonly status: 'pass' | 'fail' | 'n/a';
}

/** What {@link checkSettings} and {@link checkRunLog} report. */
export interface CheckReport {
  readonly model: string;
  readonly scenario: Scenario;
  readonly division: Division;
  /** Which run: a normal run, or a compliance test's. */
  readonly kind: RunKind;
  /** The detail log checked, for finished runs. */
  readonly file?: string;
  /** True when no rule fails. */
  readonly compliant: boolean;
  readonly violations: RuleViolation[];
  readonly rules: RuleOutcome[];
  /** Scenarios the rules' suites require for the benchmark (absent for a model their tables do not list). */
  readonly requiredScenarios?: { readonly datacenter?: readonly Scenario[]; readonly edge?: readonly Scenario[] };
  /**
   * Server runs of an LLM benchmark: the TTFT/TPOT limits of the submission
   * checker's table that applied (Server, or Interactive for an
   * `-interactive` model or an Interactive folder), and for a finished run
   * the 99th percentiles it compares with them (its llm_check).
   */
  readonly tokenLimits?: TokenLimitsApplied;
  /** Assumptions and config warnings worth reading. */
  readonly notes: string[];
}

/** Which TTFT/TPOT limits a check held a run to. */
export interface TokenLimitsApplied {
  /** The checker's benchmark name (e.g. llama3.1-8b) and scenario. */
  readonly benchmark: string;
  readonly scenario: 'Server' | 'Interactive';
  readonly ttftNs: number;
  readonly tpotNs: number;
  /** Where the limits come from. */
  readonly source: string;
  /** A finished run: its result_first_token_99.00_percentile_latency_ns and result_time_per_output_token_99.00_percentile_ns (null: absent). */
  readonly measured?: { readonly ttftP99Ns: number | null; readonly tpotP99Ns: number | null };
}

/** The check report's account of the limits (and a note saying it). */
function tokenLimitsApplied(limits: LlmLatencyLimits, facts: RunFacts, notes: string[]): TokenLimitsApplied {
  const num = (key: string): number | null => (typeof facts.results?.[key] === 'number' ? (facts.results[key] as number) : null);
  const measured = facts.results !== undefined ? { ttftP99Ns: num(TTFT_P99_KEY), tpotP99Ns: num(TPOT_P99_KEY) } : undefined;
  notes.push(`TTFT/TPOT limits: ${limits.benchmark} ${limits.scenario}, TTFT under ${limitMs(limits.ttftNs)} and TPOT under ${limitMs(limits.tpotNs)} at the 99th percentile ` +
    `(${LLM_LIMITS_SOURCE}; it reads ${TTFT_P99_KEY} and ${TPOT_P99_KEY})` +
    (measured !== undefined ? `; this run: TTFT ${measured.ttftP99Ns ?? '(missing)'} ns, TPOT ${measured.tpotP99Ns ?? '(missing)'} ns.` : '.'));
  return {
    benchmark: limits.benchmark, scenario: limits.scenario, ttftNs: limits.ttftNs, tpotNs: limits.tpotNs, source: LLM_LIMITS_SOURCE,
    ...(measured !== undefined ? { measured } : {}),
  };
}

/** Applies every rule to one run's facts. */
export function evaluateRules(ctx: RuleContext, file?: string, notes: string[] = []): CheckReport {
  const violations: RuleViolation[] = [];
  const rules: RuleOutcome[] = [];
  for (const rule of RUN_RULES) {
    if (!rule.divisions.includes(ctx.division) || !rule.applies(ctx)) {
      rules.push({ id: rule.id, description: rule.description, status: 'n/a' });
      continue;
    }
    const found = rule.check(ctx);
    violations.push(...found);
    rules.push({ id: rule.id, description: rule.description, status: found.length > 0 ? 'fail' : 'pass' });
  }
  const b = ctx.benchmark;
  const limits = ctx.tokenLimits !== undefined && ctx.facts.scenario === 'Server' ? tokenLimitsApplied(ctx.tokenLimits, ctx.facts, notes) : undefined;
  return {
    model: ctx.model, scenario: ctx.facts.scenario, division: ctx.division, kind: ctx.kind,
    ...(file !== undefined ? { file } : {}),
    compliant: violations.length === 0, violations, rules,
    ...(b ? { requiredScenarios: { ...(b.datacenter ? { datacenter: b.datacenter } : {}), ...(b.edge ? { edge: b.edge } : {}) } } : {}),
    ...(limits !== undefined ? { tokenLimits: limits } : {}),
    notes,
  };
}

function checkDivision(division: unknown): Division {
  if (!DIVISIONS.includes(division as Division)) {
    throw new SettingsError('division', division, `Invalid division ${show(division)}: expected ${DIVISIONS.join(' or ')}.`);
  }
  return division as Division;
}

function sampleCount(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new SettingsError(name, value, `Invalid ${name} ${show(value)}: expected a positive integer (samples).`);
  }
  return value;
}

/** Facts of loaded settings, derived with the QSL's counts exactly as StartTest derives them. */
export function factsOfSettings(loaded: LoadedSettings, qslTotal: number, qslPerformance: number, withSources: boolean): RunFacts {
  const { effective } = deriveEffectiveSettings(loaded, qslTotal, qslPerformance);
  const sources = new Map<string, string>();
  if (withSources) {
    for (const src of loaded.provenance.values()) if (src.origin !== 'default') sources.set(src.snake, src.description);
    // Effective names whose value a requested setting decides.
    const via: Record<string, string> = { performance_sample_count: 'performance_sample_count_override', accuracy_sample_count: 'accuracy_sample_count_override', samples_per_query: 'min_query_count' };
    for (const [eff, req] of Object.entries(via)) { const d = sources.get(req); if (d !== undefined) sources.set(eff, d); }
  }
  return {
    scenario: String(effective.scenario) as Scenario,
    mode: String(effective.mode),
    requested: loaded.referenceSettings as Record<string, FactValue>,
    effective: effective as Record<string, FactValue>,
    qslTotal, qslPerformance, sources,
  };
}

/** The built-in mlperf.conf's settings for a model and scenario: what the rules hold a run to. */
export function officialSettings(model: string, scenario: Scenario, mode: TestMode): { loaded: LoadedSettings; known: boolean } {
  const loaded = loadSettings({ model, scenario, overrides: [{ label: 'mode', settings: { mode } }] });
  return { loaded, known: loaded.provenance.get('performanceSampleCountOverride')?.origin === 'mlperf.conf' };
}

/** Throws a bad-input error for a model the closed division does not know. */
export function unknownModel(model: string): never {
  const names = BENCHMARKS.map((b) => b.model);
  const s = closest(model, names);
  throw new SettingsError('model', model,
    `Unknown model ${show(model)} for the closed division: mlperf.conf has no performance_sample_count for it` +
    `${s !== undefined ? ` (did you mean '${s}'?)` : ''}. The rules' benchmarks: ${names.join(', ')}; use --division open for another model.`);
}

/**
 * Every way the effective settings of `model` / `scenario` (config files and
 * overrides applied as a run applies them) would break the run rules.
 */
export function checkSettings(options: CheckSettingsOptions): CheckReport {
  const division = checkDivision(options.division ?? 'closed');
  if (!SCENARIOS.includes(options.scenario)) {
    throw new SettingsError('scenario', options.scenario, `Invalid scenario ${show(options.scenario)}: expected one of ${SCENARIOS.join(', ')}.`);
  }
  const mode = options.mode ?? 'PerformanceOnly';
  if (!TEST_MODES.includes(mode)) throw new SettingsError('mode', mode, `Invalid mode ${show(mode)}: expected one of ${TEST_MODES.join(', ')}.`);
  const official = officialSettings(options.model, options.scenario, mode);
  if (!official.known && division === 'closed') unknownModel(options.model);

  const notes: string[] = [];
  const qslSize = factNumber(official.loaded.referenceSettings as Record<string, FactValue>, 'performance_sample_count_override');
  let total: number;
  if (options.totalSampleCount !== undefined) {
    total = sampleCount('totalSampleCount', options.totalSampleCount);
  } else {
    total = qslSize > 0 ? qslSize : 1024;
    notes.push(`The data set's size is assumed to be ${total} samples (${qslSize > 0 ? 'the benchmark\'s QSL size' : 'no size known'}); give the real one (--total-sample-count) to check the sample counts.`);
  }
  const performance = options.performanceSampleCount !== undefined
    ? sampleCount('performanceSampleCount', options.performanceSampleCount)
    : Math.min(total, qslSize > 0 ? qslSize : total);
  if (performance > total) {
    throw new SettingsError('performanceSampleCount', performance, `Invalid performanceSampleCount ${performance}: more than the data set's ${total} samples (totalSampleCount).`);
  }

  const layers: SettingsLayer[] = [...(options.overrides ?? [])];
  if (options.mode !== undefined) layers.push({ label: '--mode', settings: { mode } });
  const loaded = loadSettings({
    model: options.model, scenario: options.scenario,
    ...(options.mlperfConf !== undefined ? { mlperfConf: options.mlperfConf } : {}),
    ...(options.userConf !== undefined ? { userConf: options.userConf } : {}),
    ...(options.lenient === true ? { lenient: true } : {}),
    overrides: layers,
  });
  notes.push(...loaded.warnings.map((w) => `config warning: ${w}`));
  const facts = factsOfSettings(loaded, total, performance, true);
  const benchmark = benchmarkOf(options.model);
  if (benchmark === undefined && official.known) notes.push(`${options.model} is in mlperf.conf but not in the rules' suite tables (seeds/000): its required scenarios are not checked.`);
  const tokenLimits = limitsFor(options.model, options.scenario);
  return evaluateRules({
    model: options.model, division, kind: 'run', facts,
    official: factsOfSettings(official.loaded, total, performance, false),
    ...(benchmark ? { benchmark } : {}),
    ...(tokenLimits ? { tokenLimits } : {}),
  }, undefined, notes);
}
