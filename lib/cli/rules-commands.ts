/**
 * `loadgen stats` (plan a run: the rules' sample size, a run's length, early
 * stopping for given counts and the planner) and `loadgen check` (the run
 * rules, before a run or on a finished run's logs), and the check that
 * `loadgen run --check` makes first.
 */
import { Command, InvalidArgumentError } from 'commander';

import type { QuerySampleLibrary } from '../types/api.js';
import { checkSettings, type CheckReport } from '../rules/check.js';
import { checkRunLog, type RunLogCheck } from '../rules/check-logdir.js';
import { DIVISIONS, type Division } from '../rules/closed-rules.js';
import {
  earlyStopping, planEarlyStopping, requiredQueries, runDuration,
  type EarlyStoppingPlan, type EarlyStoppingReport, type RunDuration, type SampleSize,
} from '../rules/stats.js';
import { SettingsError } from '../errors.js';
import { settingsFromAssignments } from '../settings/assignments.js';
import { echo } from '../settings/messages.js';
import { SCENARIOS, TEST_MODES, type Scenario, type TestMode } from '../types/settings.js';
import { EXIT_INVALID, EXIT_VALID } from './exit-codes.js';
import { choiceOption, collect, positiveInteger } from './options.js';

function numberOption(name: string): (value: string) => number {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`${name} must be a number, got '${echo(value)}'.`);
    return n;
  };
}

function countOption(name: string): (value: string) => number {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError(`${name} must be a whole number >= 0, got '${echo(value)}'.`);
    return Number(value);
  };
}

function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

const pct = (p: number): string => `${+(p * 100).toPrecision(10)}%`;
const seconds = (s: number): string => (s >= 3600 ? `${(s / 3600).toFixed(2)} h` : s >= 60 ? `${(s / 60).toFixed(1)} min` : `${+s.toPrecision(4)} s`);

interface StatsOptions {
  percentile?: number;
  confidence?: number;
  margin?: number;
  qps?: number;
  latencyMs?: number;
  earlyStopping?: boolean;
  queries?: number;
  overlatency?: number;
  tailRate?: number;
  scenario?: string;
  json?: boolean;
}

function statsCommand(o: StatsOptions): number {
  if (o.percentile === undefined) throw new SettingsError('--percentile', undefined, '--percentile is required, a fraction (e.g. 0.99 for the 99th percentile).');
  const out: { sampleSize?: SampleSize; duration?: RunDuration; earlyStopping?: EarlyStoppingReport; plan?: EarlyStoppingPlan } = {};
  const lines: string[] = [];
  if (o.earlyStopping) {
    for (const [flag, v] of [['--confidence', o.confidence], ['--margin', o.margin]] as const) {
      if (v !== undefined) throw new SettingsError(flag, v, `${flag} applies to the sample-size formula, not to --early-stopping (its confidence is the reference's fixed 0.99).`);
    }
    if ((o.queries === undefined) === (o.tailRate === undefined)) {
      throw new SettingsError('--queries', o.queries, '--early-stopping needs --queries N (what early stopping reports for N queries) or --tail-rate R (how many queries pass at that over-latency share), not both.');
    }
    if (o.tailRate !== undefined) {
      if (o.overlatency !== undefined) throw new SettingsError('--overlatency', o.overlatency, '--overlatency goes with --queries, not --tail-rate.');
      const plan = planEarlyStopping({ percentile: o.percentile, tailRate: o.tailRate });
      out.plan = plan;
      lines.push(`Early stopping plan (Server, ${pct(plan.percentile)} percentile, ${pct(plan.tailRate)} of queries over the bound):`,
        `  queries needed : ${plan.queries} (${plan.overLatency} of them over the bound; ${plan.minPassing} under it are needed)`);
      if (o.qps !== undefined) out.duration = runDuration({ queries: plan.queries, qps: o.qps });
    } else {
      const scenario = o.scenario as 'SingleStream' | 'MultiStream' | 'Server' | undefined;
      const r = earlyStopping({ ...(scenario ? { scenario } : {}), percentile: o.percentile, queries: o.queries!, ...(o.overlatency !== undefined ? { overLatency: o.overlatency } : {}) });
      out.earlyStopping = r;
      lines.push(`Early stopping (${r.scenario}, ${pct(r.percentile)} percentile, ${r.queries} queries${r.overLatency !== undefined ? `, ${r.overLatency} over the bound` : ''}): ${r.met ? 'met' : 'NOT met'}`);
      if (r.minTotalQueries !== undefined) lines.push(`  queries needed with ${r.overLatency} over the bound: ${r.minTotalQueries} (${r.minPassing} under it)`);
      if (r.minQueriesNeeded !== undefined) lines.push(`  fewest queries for an estimate: ${r.minQueriesNeeded}`);
      if (r.rankIndex !== undefined && r.rankIndex !== null) lines.push(`  reported latency: position ${r.rankIndex} (0-based) of the ${r.queries} latencies sorted ascending`);
      lines.push('Early Stopping Result:', r.recommendation);
      if (r.scenario !== 'Server' && r.met) lines.push('(estimates computed over latencies 0, 1, ..., n-1: each value is its position)');
    }
  } else {
    for (const [flag, v] of [['--queries', o.queries], ['--overlatency', o.overlatency], ['--tail-rate', o.tailRate], ['--scenario', o.scenario]] as const) {
      if (v !== undefined) throw new SettingsError(flag, v, `${flag} applies with --early-stopping only.`);
    }
    const s = requiredQueries({ percentile: o.percentile, ...(o.confidence !== undefined ? { confidence: o.confidence } : {}), ...(o.margin !== undefined ? { margin: o.margin } : {}) });
    out.sampleSize = s;
    lines.push(`Queries for the ${pct(s.percentile)} latency percentile at ${pct(s.confidence)} confidence, margin ${pct(s.margin)}:`,
      `  NumQueries = NormsInv((1 - ${s.confidence}) / 2)^2 * ${s.percentile} * (1 - ${s.percentile}) / ${+s.margin.toPrecision(12)}^2 = ${s.exactQueries.toFixed(2)}`,
      `  queries         : ${s.queries}`,
      `  rounded (2^13)  : ${s.roundedQueries} (${s.roundedMultiple}*2^13)`);
    if (o.qps !== undefined || o.latencyMs !== undefined) {
      out.duration = runDuration({ queries: s.roundedQueries, ...(o.qps !== undefined ? { qps: o.qps } : {}), ...(o.latencyMs !== undefined ? { latencyMs: o.latencyMs } : {}) });
    }
  }
  if (o.earlyStopping && o.latencyMs !== undefined) throw new SettingsError('--latency-ms', o.latencyMs, '--latency-ms goes with the sample-size formula; with --early-stopping give --qps.');
  if (o.earlyStopping && o.qps !== undefined && out.duration === undefined) {
    out.duration = runDuration({ queries: o.queries!, qps: o.qps });
  }
  if (out.duration !== undefined) {
    const d = out.duration;
    lines.push(`Run length: ${seconds(d.queriesSeconds)} for those queries; the rules' minimum is ${d.minimumSeconds} s, so a compliant run lasts ${seconds(d.runSeconds)} (${d.runQueries} queries).`);
  }
  process.stdout.write(o.json ? `${JSON.stringify(out, null, 2)}\n` : `${lines.join('\n')}\n`);
  return EXIT_VALID;
}

/** The report of one check as text. */
export function formatCheckReport(r: CheckReport): string {
  const lines: string[] = [];
  const what = r.kind === 'run' ? (r.file !== undefined ? `run log ${r.file}` : 'planned run') : `${r.kind} run ${r.file ?? ''}`;
  lines.push(`${r.model} ${r.scenario}, ${r.division} division, ${what}: ${r.compliant ? 'COMPLIANT' : `NOT COMPLIANT (${r.violations.length} problem${r.violations.length === 1 ? '' : 's'})`}`);
  for (const v of r.violations) lines.push(`  x ${v.message}`);
  const passed = r.rules.filter((x) => x.status === 'pass').map((x) => x.id);
  if (passed.length > 0) lines.push(`  passed: ${passed.join(', ')}`);
  if (r.requiredScenarios !== undefined) {
    const s = r.requiredScenarios;
    lines.push(`  required scenarios: ${[s.datacenter ? `datacenter ${s.datacenter.join(', ')}` : '', s.edge ? `edge ${s.edge.join(', ')}` : ''].filter(Boolean).join('; ')}`);
  }
  for (const n of r.notes) lines.push(`  note: ${n}`);
  return lines.join('\n');
}

interface CheckOptions {
  model?: string;
  scenario?: string;
  mode?: string;
  userConf?: string;
  mlperfConf?: string;
  division: string;
  set: string[];
  totalSampleCount?: number;
  performanceSampleCount?: number;
  lenient?: boolean;
  json?: boolean;
}

function checkCommand(logdir: string | undefined, o: CheckOptions): number {
  const division = o.division as Division;
  if (logdir !== undefined) {
    const planned: Array<[string, unknown]> = [['--scenario', o.scenario], ['--mode', o.mode], ['--user-conf', o.userConf], ['--mlperf-conf', o.mlperfConf],
      ['--total-sample-count', o.totalSampleCount], ['--performance-sample-count', o.performanceSampleCount], ['--set', o.set.length > 0 ? o.set : undefined]];
    for (const [flag, v] of planned) {
      if (v !== undefined) throw new SettingsError(flag, v, `${flag} describes a planned run; with LOGDIR the settings come from the run's detail log.`);
    }
    const result: RunLogCheck = checkRunLog(logdir, { ...(o.model !== undefined ? { model: o.model } : {}), division });
    // Says which benchmark the run is held to when --model did not name it.
    const from = result.modelFrom === 'path' ? `model ${result.model}: a folder name on the path\n`
      : result.modelFrom === 'settings' ? `model ${result.model}: the detail log's settings are mlperf.conf's for it\n` : '';
    process.stdout.write(o.json ? `${JSON.stringify(result, jsonReplacer, 2)}\n` : `${from}${result.reports.map(formatCheckReport).join('\n\n')}\n`);
    // Warnings, not problems of the run: the exit status stays the rules'.
    if (!o.json) for (const w of result.warnings) process.stderr.write(`loadgen: warning: ${w}\n`);
    return result.compliant ? EXIT_VALID : EXIT_INVALID;
  }
  if (o.model === undefined) throw new SettingsError('--model', undefined, 'loadgen check needs --model (e.g. resnet50) and --scenario, or a LOGDIR of a finished run.');
  if (o.scenario === undefined) throw new SettingsError('--scenario', undefined, `loadgen check needs --scenario (${SCENARIOS.join(', ')}).`);
  const fromSet = settingsFromAssignments(o.set);
  const report = checkSettings({
    model: o.model, scenario: o.scenario as Scenario, division,
    ...(o.mode !== undefined ? { mode: o.mode as TestMode } : {}),
    ...(o.userConf !== undefined ? { userConf: o.userConf } : {}),
    ...(o.mlperfConf !== undefined ? { mlperfConf: o.mlperfConf } : {}),
    ...(o.totalSampleCount !== undefined ? { totalSampleCount: o.totalSampleCount } : {}),
    ...(o.performanceSampleCount !== undefined ? { performanceSampleCount: o.performanceSampleCount } : {}),
    ...(Object.keys(fromSet).length > 0 ? { overrides: [{ label: '--set', settings: fromSet }] } : {}),
    ...(o.lenient ? { lenient: true } : {}),
  });
  process.stdout.write(o.json ? `${JSON.stringify(report, jsonReplacer, 2)}\n` : `${formatCheckReport(report)}\n`);
  return report.compliant ? EXIT_VALID : EXIT_INVALID;
}

/** Registers `loadgen stats` and `loadgen check`. */
export function registerRulesCommands(program: Command): void {
  program
    .command('stats')
    .description('plan a run: queries the rules\' formula requires for a latency percentile, how long the run takes, and early stopping')
    .option('--percentile <p>', 'tail latency percentile as a fraction, e.g. 0.99', numberOption('--percentile'))
    .option('--confidence <c>', 'confidence as a fraction (default 0.99)', numberOption('--confidence'))
    .option('--margin <m>', 'margin of error as a fraction (default (1 - percentile) / 20)', numberOption('--margin'))
    .option('--qps <n>', 'queries per second of the run: prints how long it takes', numberOption('--qps'))
    .option('--latency-ms <ms>', 'latency of one query (SingleStream/MultiStream issue one at a time): prints how long the run takes', numberOption('--latency-ms'))
    .option('--early-stopping', 'what early stopping reports for --queries (and --overlatency), or the queries needed at --tail-rate')
    .option('--queries <n>', 'with --early-stopping: queries issued', countOption('--queries'))
    .option('--overlatency <k>', 'with --early-stopping: queries over the latency bound (Server)', countOption('--overlatency'))
    .option('--tail-rate <r>', 'with --early-stopping: expected share of queries over the bound; prints the queries a Server run needs to pass', numberOption('--tail-rate'))
    .addOption(choiceOption('--scenario <name>', 'with --early-stopping: the scenario (default Server with --overlatency, else SingleStream)', ['SingleStream', 'MultiStream', 'Server']))
    .option('--json', 'print JSON')
    .addHelpText('after',
      '\nNumQueries = NormsInv((1 - confidence) / 2)^2 * p * (1 - p) / margin^2, rounded up to a multiple of 2^13\n(the inference rules\' appendix "Number of Queries").\n' +
      'Early stopping is the native core\'s, exactly as a run computes it.\nExit status: 0 printed, 2 bad input.\n' +
      'Examples:\n  npx loadgen stats --percentile 0.99 --confidence 0.99 --qps 1000\n' +
      '  npx loadgen stats --early-stopping --percentile 0.90 --queries 10000 --overlatency 120\n' +
      '  npx loadgen stats --early-stopping --percentile 0.99 --tail-rate 0.005')
    .action((options: StatsOptions) => {
      process.exitCode = statsCommand(options);
    });

  program
    .command('check [logdir]')
    .description('every way a run\'s settings (before it: --model/--scenario and the config files; after it: LOGDIR) break the MLPerf run rules')
    .option('--model <name>', 'model name as mlperf.conf spells it (resnet50, bert, ...); with LOGDIR: default a folder name on its path, else the benchmark whose mlperf.conf settings the detail log carries')
    .addOption(choiceOption('--scenario <name>', 'test scenario', SCENARIOS))
    .addOption(choiceOption('--mode <name>', 'test mode of the planned run (default PerformanceOnly)', TEST_MODES))
    .option('--user-conf <file>', 'user.conf applied after mlperf.conf')
    .option('--mlperf-conf <file>', 'mlperf.conf replacing the built-in copy (the rules stay the built-in one\'s)')
    .addOption(choiceOption('--division <name>', 'division', DIVISIONS).default('closed'))
    .option('--set <key=value>', 'any TestSettings field by its reference name, applied after the config files (repeatable)', collect, [])
    .option('--total-sample-count <n>', 'the data set\'s size (the QSL\'s total sample count)', positiveInteger('--total-sample-count'))
    .option('--performance-sample-count <n>', 'the QSL\'s performance sample count', positiveInteger('--performance-sample-count'))
    .option('--lenient', 'apply config files exactly as the reference does; problems become warnings')
    .option('--json', 'print JSON')
    .addHelpText('after',
      '\nExit status: 0 compliant, 1 not compliant, 2 bad input.\n' +
      'Examples:\n  npx loadgen check --model resnet50 --scenario Server --user-conf user.conf\n' +
      '  npx loadgen check out/resnet50/Server --model resnet50   (a finished run; TEST01/ and TEST04/ beside it are checked too)')
    .action((logdir: string | undefined, options: CheckOptions) => {
      process.exitCode = checkCommand(logdir, options);
    });
}

/** Options `loadgen run` takes for its check. */
export interface RunCheckOptions {
  check?: boolean;
  force?: boolean;
  division?: string;
  model?: string;
  scenario?: string;
  mode?: string;
  userConf?: string;
  mlperfConf?: string;
  set: string[];
  lenient?: boolean;
}

/** Adds --check / --force / --division to `loadgen run`. */
export function addRunCheckOptions(command: Command): Command {
  return command
    .option('--check', 'first check the settings against the MLPerf run rules (as loadgen check); refuse a non-compliant run (exit 1, nothing run)')
    .option('--force', 'with --check: print the problems and run anyway')
    .addOption(choiceOption('--division <name>', 'with --check: division (default closed)', DIVISIONS));
}

/** Refuses --force / --division without --check, and --check on the built-in demo (no `--sut`), before anything starts. */
export function checkRunCheckFlags(o: RunCheckOptions, withSut: boolean): void {
  if (!o.check) {
    if (o.force) throw new SettingsError('--force', true, '--force applies with --check only.');
    if (o.division !== undefined) throw new SettingsError('--division', o.division, '--division applies with --check only.');
  } else if (!withSut) {
    throw new SettingsError('--check', true, '--check applies to runs with --sut (the built-in demo is not a benchmark of the rules).');
  }
}

/**
 * `loadgen run --check`: the same check as `loadgen check`, with the QSL's
 * counts. Returns EXIT_INVALID when the run must not start, else undefined.
 */
export function runCheck(o: RunCheckOptions, qsl: Pick<QuerySampleLibrary, 'totalSampleCount' | 'performanceSampleCount'>, quiet: boolean): number | undefined {
  checkRunCheckFlags(o, true);
  if (!o.check) return undefined;
  if (o.model === undefined) throw new SettingsError('--model', undefined, '--check needs --model (the model name mlperf.conf uses, e.g. resnet50; network SUTs: --config-model).');
  const fromSet = settingsFromAssignments(o.set);
  const scenario = (o.scenario ?? fromSet.scenario ?? 'SingleStream') as Scenario;
  const report = checkSettings({
    model: o.model, scenario, division: (o.division ?? 'closed') as Division,
    ...(o.mode !== undefined ? { mode: o.mode as TestMode } : {}),
    ...(o.userConf !== undefined ? { userConf: o.userConf } : {}),
    ...(o.mlperfConf !== undefined ? { mlperfConf: o.mlperfConf } : {}),
    totalSampleCount: qsl.totalSampleCount,
    performanceSampleCount: Math.min(qsl.performanceSampleCount, qsl.totalSampleCount),
    ...(Object.keys(fromSet).length > 0 ? { overrides: [{ label: '--set', settings: fromSet }] } : {}),
    ...(o.lenient ? { lenient: true } : {}),
  });
  if (report.compliant) {
    if (!quiet) process.stderr.write(`loadgen: check: ${report.model} ${report.scenario} is compliant with the ${report.division} division's run rules\n`);
    return undefined;
  }
  process.stderr.write(`${formatCheckReport(report).split('\n').map((l) => `loadgen: check: ${l}`).join('\n')}\n`);
  if (o.force) {
    process.stderr.write('loadgen: check: --force: running anyway; this run does not meet the rules\n');
    return undefined;
  }
  process.stderr.write('loadgen: check: nothing was run (fix the settings, or --force to run anyway)\n');
  return EXIT_INVALID;
}
