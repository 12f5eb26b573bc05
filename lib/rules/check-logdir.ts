/**
 * `loadgen check LOGDIR`: the run rules applied to a finished run's detail
 * log (its requested and effective settings and its results), to its
 * accuracy run and to TEST01 / TEST04 compliance runs when the folder holds
 * them, as the MLCommons submission checker and compliance scripts read them
 * (spec/50 §7.2, §7.3).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';

import { SettingsError } from '../errors.js';
import { parseDetailLog } from '../fs/log-files.js';
import { echo, PATH_ECHO_LIMIT, show } from '../settings/messages.js';
import { SCENARIOS, type Scenario, type TestMode } from '../types/settings.js';
import { confModelOf, isInteractiveModel, limitsFor } from '../config/llm-latency-limits.js';
import { benchmarkOf, BENCHMARKS } from './benchmarks.js';
import { evaluateRules, factsOfSettings, officialSettings, unknownModel, type CheckReport } from './check.js';
import { DIVISIONS, type Division, type RunKind } from './closed-rules.js';
import type { FactValue, RunFacts } from './facts.js';

/** Options of {@link checkRunLog}. */
export interface CheckRunLogOptions {
  /**
   * Model name (mlperf.conf's); default: a folder name on the path that is
   * one (results/<sut>/<model>/...), else the benchmark whose mlperf.conf
   * settings the detail log's requested settings carry.
   */
  readonly model?: string;
  /** Default closed. */
  readonly division?: Division;
}

/** What {@link checkRunLog} reports: one report per detail log found. */
export interface RunLogCheck {
  readonly dir: string;
  readonly model: string;
  /** How the model was found: given, a folder name on the path, or the detail log's settings. */
  readonly modelFrom: 'option' | 'path' | 'settings';
  readonly compliant: boolean;
  /** The run first, then accuracy/, TEST01/ and TEST04/ when present. */
  readonly reports: CheckReport[];
  /**
   * Files in the folders of those detail logs that the MLCommons submission
   * checker's file-list check rejects ("has file list mismatch"), one
   * warning each: they do not make the run non-compliant, the submission
   * needs them gone (e.g. report.html, loadgen_report_data.json).
   */
  readonly warnings: string[];
}

/** What a folder of a submission holds, for the checker's file-list check. */
type SubmissionFolder = 'performance' | 'accuracy' | 'compliance performance';

/**
 * The files the submission checker accepts in each folder: its required and
 * optional lists (summary and detail logs; the accuracy log, optional in a
 * performance folder; accuracy.txt, which its accuracy scripts write; spl.txt
 * of a power run) plus what its file-list check always ignores.
 */
const SUBMISSION_FILES: Record<SubmissionFolder, readonly string[]> = {
  performance: ['mlperf_log_summary.txt', 'mlperf_log_detail.txt', 'mlperf_log_accuracy.json', 'spl.txt'],
  accuracy: ['mlperf_log_summary.txt', 'mlperf_log_detail.txt', 'mlperf_log_accuracy.json', 'accuracy.txt'],
  'compliance performance': ['mlperf_log_summary.txt', 'mlperf_log_detail.txt', 'mlperf_log_accuracy.json'],
};
const CHECKER_IGNORES = ['mlperf_log_trace.json', 'results.json', '.gitkeep'];
const LOADGEN_REPORT_FILE = /^(?:loadgen_(?:.*_)?report_data.*\.json|(?:.*_)?report.*\.html)$/;

/** One warning per file in `folder` that the submission checker's file-list check rejects there. */
function submissionFileWarnings(folder: string, kind: SubmissionFolder): string[] {
  const accepted = SUBMISSION_FILES[kind];
  const warnings: string[] = [];
  for (const name of readdirSync(folder).sort()) {
    if (accepted.includes(name) || CHECKER_IGNORES.includes(name) || !statSync(join(folder, name)).isFile()) continue;
    const hint = LOADGEN_REPORT_FILE.test(name) ? ' (loadgen run --no-report writes neither report.html nor loadgen_report_data.json)' : '';
    warnings.push(`${echo(join(folder, name), PATH_ECHO_LIMIT)}: the MLCommons submission checker rejects this file in ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} folder ` +
      `("has file list mismatch"; it accepts ${accepted.join(', ')}); remove it before submitting${hint}.`);
  }
  return warnings;
}

const DETAIL_NAME = /detail\.txt$/;

/** The detail log of a run folder: in it, or under performance/run_1 (the submission layout). */
function detailIn(dir: string): string | undefined {
  for (const d of [dir, join(dir, 'performance', 'run_1'), join(dir, 'performance')]) {
    if (!existsSync(d) || !statSync(d).isDirectory()) continue;
    const names = readdirSync(d).filter((n) => DETAIL_NAME.test(n)).sort();
    if (names.length > 0) return join(d, names.includes('mlperf_log_detail.txt') ? 'mlperf_log_detail.txt' : names[0]!);
  }
  return undefined;
}

/** Big integers (the seeds) lose digits in JSON.parse: read their text. */
function rawSeeds(text: string): Map<string, bigint> {
  const out = new Map<string, bigint>();
  const re = /"key": "((?:requested|effective)_[a-z0-9_]*seed)", "value": (\d+)/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) if (!out.has(m[1]!)) out.set(m[1]!, BigInt(m[2]!));
  return out;
}

/** The facts of one detail log: requested_* and effective_* settings, the QSL's counts and the results. */
export function factsOfDetailLog(text: string, file = 'detail log'): RunFacts {
  const entries = parseDetailLog(text);
  if (entries.length === 0) throw new SettingsError('logdir', file, `${echo(file, PATH_ECHO_LIMIT)}: not a detail log (no :::MLLOG lines).`);
  const seeds = rawSeeds(text);
  const requested: Record<string, FactValue> = {};
  const effective: Record<string, FactValue> = {};
  const results: Record<string, unknown> = {};
  let errors = 0;
  for (const e of entries) {
    const entry = e as unknown as { key: string; value: unknown; metadata?: { is_error?: boolean } };
    if (entry.metadata?.is_error === true) errors += 1;
    const value = seeds.get(entry.key) ?? entry.value;
    if (entry.key.startsWith('requested_')) {
      const k = entry.key.slice(10) === 'test_mode' ? 'mode' : entry.key.slice(10);
      if (!(k in requested)) requested[k] = value as FactValue;
    } else if (entry.key.startsWith('effective_')) {
      const k = entry.key.slice(10) === 'test_mode' ? 'mode' : entry.key.slice(10);
      if (!(k in effective)) effective[k] = value as FactValue;
    } else if (!(entry.key in results)) {
      results[entry.key] = value;
    }
  }
  const scenario = effective.scenario;
  if (!SCENARIOS.includes(scenario as Scenario)) {
    throw new SettingsError('logdir', file, `${echo(file, PATH_ECHO_LIMIT)}: no effective_scenario in the detail log (got ${show(scenario)}); is it a complete LoadGen detail log?`);
  }
  // Token settings are derived but not logged as effective_* (spec/50): the requested ones decide.
  for (const k of ['use_token_latencies', 'server_ttft_latency', 'server_tpot_latency']) {
    if (!(k in effective) && k in requested) effective[k] = requested[k]!;
  }
  results.num_errors = Math.max(Number(results.num_errors ?? 0), errors);
  const finishedRun = 'result_validity' in results || 'num_errors' in results;
  return {
    scenario: scenario as Scenario,
    mode: String(effective.mode ?? requested.mode ?? ''),
    requested, effective,
    qslTotal: Number(results.qsl_reported_total_count ?? 0),
    qslPerformance: Number(results.qsl_reported_performance_count ?? 0),
    ...(finishedRun ? { results } : {}),
  };
}

/** The seeds mlperf.conf gives every model (a run that read it has them). */
const SEED_KEYS = ['qsl_rng_seed', 'sample_index_rng_seed', 'schedule_rng_seed'] as const;

function sameValue(a: FactValue | undefined, b: unknown): boolean {
  if (a === undefined || b === undefined) return false;
  if (typeof a === 'boolean' || typeof b === 'boolean') return Boolean(a) === Boolean(b);
  return String(a) === String(b) || Number(a) === Number(b);
}

/** mlperf.conf's per-model switches a run must keep as they are. */
const MODEL_SWITCHES = ['sample_concatenate_permutation', 'use_token_latencies', 'infer_token_latencies'] as const;
/** mlperf.conf's per-model Server bounds a run may tighten, never loosen. */
const MODEL_BOUNDS = ['server_target_latency_ns', 'server_ttft_latency', 'server_tpot_latency'] as const;

/**
 * The benchmarks whose built-in mlperf.conf settings a detail log carries,
 * as the rules hold a run to them: the official seeds, the model's
 * performance sample count (effective_performance_sample_count, which tells
 * the benchmarks apart), its switches (sample_concatenate_permutation,
 * token latencies) as they are, and in Server its latency bounds or tighter
 * ones. Empty for a run that read no mlperf.conf (seeds 0: a run without --model).
 */
export function modelsFittingLog(facts: RunFacts): string[] {
  const wildcard = officialSettings('*', facts.scenario, 'PerformanceOnly').loaded.referenceSettings;
  if (!SEED_KEYS.every((k) => sameValue(facts.requested[k], wildcard[k]))) return [];
  return BENCHMARKS.map((b) => b.model).filter((model) => {
    const official = officialSettings(model, facts.scenario, 'PerformanceOnly');
    if (!official.known) return false;
    const settings = official.loaded.referenceSettings;
    if (!sameValue(facts.effective.performance_sample_count, settings.performance_sample_count_override)) return false;
    if (!MODEL_SWITCHES.every((k) => String(settings[k]) === String(wildcard[k]) || sameValue(facts.requested[k], settings[k]))) return false;
    if (facts.scenario !== 'Server') return true;
    return MODEL_BOUNDS.every((k) => {
      const bound = Number(settings[k]);
      if (String(settings[k]) === String(wildcard[k]) || !(bound > 0)) return true;
      const have = Number(facts.requested[k]);
      return have > 0 && have <= bound;
    });
  });
}

/** A submission's Interactive folder on the path (results/<system>/<benchmark>/Interactive/...): the checker holds it to the Interactive limits. */
function interactiveFolder(dir: string): boolean {
  return resolve(dir).split(sep).includes('Interactive');
}

/**
 * A model name on the path: the closest folder that mlperf.conf knows, or
 * that the checker names (llama3.1-8b, llama2-70b-99.9): under an
 * Interactive folder, the model's `-interactive` variant.
 */
function modelFromPath(dir: string, scenario: Scenario): string | undefined {
  const parts = resolve(dir).split(sep).filter(Boolean).reverse();
  const interactive = interactiveFolder(dir);
  const known = (m: string): boolean => officialSettings(m, scenario, 'PerformanceOnly').known;
  for (const p of parts) {
    if (!/^[A-Za-z0-9_.-]+$/.test(p)) continue;
    const conf = confModelOf(p, interactive) ?? p;
    if (interactive && !isInteractiveModel(conf) && known(`${conf}-interactive`)) return `${conf}-interactive`;
    if (known(conf)) return conf;
  }
  return undefined;
}

function checkOne(file: string, kind: RunKind, model: string, division: Division, interactive: boolean, reference?: RunFacts): { report: CheckReport; facts: RunFacts } {
  const facts = factsOfDetailLog(readFileSync(file, 'utf8'), file);
  const mode = (['PerformanceOnly', 'AccuracyOnly', 'SubmissionRun', 'FindPeakPerformance'].includes(facts.mode) ? facts.mode : 'PerformanceOnly') as TestMode;
  const official = officialSettings(model, facts.scenario, mode);
  if (!official.known && division === 'closed') unknownModel(model);
  const benchmark = benchmarkOf(model);
  const tokenLimits = limitsFor(model, facts.scenario, interactive);
  const report = evaluateRules({
    model, division, kind, facts,
    official: factsOfSettings(official.loaded, facts.qslTotal || 1, Math.max(1, facts.qslPerformance), false),
    ...(benchmark ? { benchmark } : {}),
    ...(reference ? { reference } : {}),
    ...(tokenLimits ? { tokenLimits } : {}),
  }, file);
  return { report, facts };
}

/**
 * The run rules applied to a finished run's folder: its detail log (in the
 * folder or under performance/run_1), and accuracy/, TEST01/ and TEST04/
 * beside it when present (a compliance run is also compared with the run).
 */
export function checkRunLog(dir: string, options: CheckRunLogOptions = {}): RunLogCheck {
  const division = options.division ?? 'closed';
  if (!DIVISIONS.includes(division)) throw new SettingsError('division', division, `Invalid division ${show(division)}: expected ${DIVISIONS.join(' or ')}.`);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new SettingsError('logdir', dir, `${echo(dir, PATH_ECHO_LIMIT)}: no such folder (LOGDIR is the folder of a finished run's logs).`);
  }
  const main = detailIn(dir);
  if (main === undefined) {
    throw new SettingsError('logdir', dir, `${echo(dir, PATH_ECHO_LIMIT)}: no mlperf_log_detail.txt in it or in performance/run_1/.`);
  }
  const { model, modelFrom } = modelOfRun(dir, factsOfDetailLog(readFileSync(main, 'utf8'), main), options.model);
  const interactive = interactiveFolder(dir);
  const run = checkOne(main, 'run', model, division, interactive);
  const reports = [run.report];
  // A run's own folder holds an accuracy run's files when that is what it ran.
  const warnings = submissionFileWarnings(dirname(main), run.facts.mode === 'AccuracyOnly' && dirname(main) === dir ? 'accuracy' : 'performance');
  const accuracy = detailIn(join(dir, 'accuracy'));
  if (accuracy !== undefined) {
    reports.push(checkOne(accuracy, 'run', model, division, interactive).report);
    warnings.push(...submissionFileWarnings(dirname(accuracy), 'accuracy'));
  }
  for (const test of ['TEST01', 'TEST04'] as const) {
    const testDir = join(dir, test);
    const file = detailIn(testDir);
    if (file !== undefined) {
      reports.push(checkOne(file, test, model, division, interactive, run.facts).report);
      warnings.push(...submissionFileWarnings(dirname(file), 'compliance performance'));
    } else if (existsSync(testDir)) {
      reports.push({ ...run.report, kind: test, file: testDir, compliant: false, rules: [], notes: [],
        violations: [{ rule: 'compliance-files', setting: test, value: 'no detail log', required: 'performance/run_1/mlperf_log_detail.txt',
          message: `compliance-files: ${test}/ has no mlperf_log_detail.txt (in it or under performance/run_1/); the checker needs the compliance run's logs.` }] });
    }
  }
  return { dir, model, modelFrom, compliant: reports.every((r) => r.compliant), reports, warnings };
}

/**
 * The model a run is checked against: the one given, a folder name on the
 * path, or the one benchmark whose mlperf.conf settings its log carries;
 * otherwise a SettingsError saying which --model to give.
 */
function modelOfRun(dir: string, facts: RunFacts, given: string | undefined): { model: string; modelFrom: RunLogCheck['modelFrom'] } {
  if (given !== undefined) return { model: given, modelFrom: 'option' };
  const fromPath = modelFromPath(dir, facts.scenario);
  if (fromPath !== undefined) return { model: fromPath, modelFrom: 'path' };
  const fitting = modelsFittingLog(facts);
  if (fitting.length === 1) return { model: fitting[0]!, modelFrom: 'settings' };
  const where = echo(dir, PATH_ECHO_LIMIT);
  if (fitting.length > 1) {
    throw new SettingsError('model', undefined, `${where}: the detail log's settings are mlperf.conf's for each of ${fitting.join(', ')} (${facts.scenario}); ` +
      `give the one this run is with --model, e.g. --model ${fitting[0]}.`);
  }
  const seeds = SEED_KEYS.map((k) => `${k} ${String(facts.requested[k] ?? '?')}`).join(', ');
  const names = BENCHMARKS.map((b) => b.model).join(', ');
  const readConf = sameValue(facts.requested.qsl_rng_seed, officialSettings('*', facts.scenario, 'PerformanceOnly').loaded.referenceSettings.qsl_rng_seed);
  throw new SettingsError('model', undefined, readConf
    ? `${where}: the detail log names no model, no folder on the path is one, and its settings are no benchmark's in mlperf.conf (${facts.scenario}); ` +
      `give the benchmark it was run for with --model (one of ${names}), or --division open --model NAME for another model.`
    : `${where}: this run read no mlperf.conf (its seeds are the TestSettings defaults: ${seeds}), as a run without --model does, so its log names no benchmark; ` +
      `give the benchmark to hold it to with --model (one of ${names}; e.g. --model resnet50), or --division open --model NAME for another model. ` +
      'The official seeds are only in a run made with --model NAME.');
}
