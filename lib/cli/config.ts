/**
 * The CLI's config-file support: `loadgen settings` and the config options of
 * `loadgen run` (kept apart from cli.ts so each command stays small).
 */
import { Command } from 'commander';

import { deriveEffectiveSettings, loadSettings } from '../config/load-settings.js';
import { type LoadedSettings, type SettingsLayer } from '../config/types.js';
import { settingsFromAssignments } from '../settings/assignments.js';
import { SETTINGS_FIELDS } from '../settings/fields.js';
import { SCENARIOS, TEST_MODES, type Scenario, type TestSettingsInput } from '../types/settings.js';
import { choiceOption, collect, positiveInteger } from './options.js';

/** Config options shared by `run` and `settings`. */
export interface ConfigCliOptions {
  mlperfConf?: string;
  userConf?: string;
  auditConf?: string;
  model?: string;
  scenario?: string;
  mode?: string;
  set: string[];
  lenient?: boolean;
}

interface SettingsOptions extends ConfigCliOptions {
  qslTotal: number;
  qslPerformance?: number;
  json?: boolean;
}

/** True when any config-file option was given (otherwise `run` keeps its plain --set behaviour). */
export function usesConfigFiles(o: ConfigCliOptions): boolean {
  return o.mlperfConf !== undefined || o.userConf !== undefined || o.model !== undefined;
}

/** The built-in mlperf.conf's origin, in messages. */
export const BUILTIN_MLPERF_CONF = 'built-in (LoadGen 6.0.17)';

/**
 * Where the settings of `run`, `trace` and `settings` come from, in one
 * sentence: the same rule for each (config files only with --model,
 * --user-conf or --mlperf-conf), so that `loadgen settings` shows what a run
 * with the same options uses.
 */
export function settingsSource(o: ConfigCliOptions): string {
  const set = o.set.length > 0 || o.mode !== undefined ? ', then --set/--mode' : '';
  if (!usesConfigFiles(o)) {
    return `the TestSettings defaults${set}; no mlperf.conf (seeds 0, not the official ones; 100 ms Server bound; 10 s minimum): ` +
      '--model NAME reads mlperf.conf and user.conf for a benchmark';
  }
  const user = o.userConf !== undefined ? `, then user.conf ${o.userConf}` : '';
  return `mlperf.conf (${o.mlperfConf ?? 'the built-in copy, LoadGen 6.0.17'}) for model ${o.model ?? '*'}${user}${set}`;
}

/**
 * Settings from the config options: mlperf.conf and user.conf first, then
 * --set and --mode on top (the order of user code before StartTest), and
 * `auditConf` last when `withAudit`.
 */
export function loadCliSettings(o: ConfigCliOptions, withAudit: boolean): LoadedSettings {
  const fromSet = settingsFromAssignments(o.set);
  // Without --model, --user-conf or --mlperf-conf a run reads no config file: neither does this.
  const files = usesConfigFiles(o);
  const scenario = (o.scenario ?? fromSet.scenario ?? 'SingleStream') as Scenario;
  const overrides: SettingsLayer[] = [];
  if (Object.keys(fromSet).length > 0) overrides.push({ label: '--set', settings: fromSet });
  if (o.mode !== undefined) overrides.push({ label: '--mode', settings: { mode: o.mode as TestSettingsInput['mode'] } });
  return loadSettings({
    ...(o.mlperfConf !== undefined ? { mlperfConf: o.mlperfConf } : files ? {} : { mlperfConf: false }),
    ...(o.userConf !== undefined ? { userConf: o.userConf } : {}),
    ...(withAudit && o.auditConf !== undefined ? { auditConf: o.auditConf } : {}),
    model: o.model ?? '*',
    scenario,
    lenient: o.lenient === true,
    overrides,
  });
}

function show(v: unknown): string {
  return typeof v === 'bigint' ? v.toString() : String(v);
}

function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

function settingsCommand(o: SettingsOptions): number {
  const loaded = loadCliSettings(o, true);
  const total = o.qslTotal;
  const performance = o.qslPerformance ?? total;
  const { effective, loggedErrors } = deriveEffectiveSettings(loaded, total, performance);
  const rows = SETTINGS_FIELDS.map((f) => {
    const value = f.extension ? loaded.settings[f.name] : loaded.referenceSettings[f.snake];
    const src = loaded.provenance.get(f.name)!;
    return { name: f.snake, value, source: src };
  });
  if (o.json === true) {
    const out = {
      model: usesConfigFiles(o) ? (o.model ?? '*') : null,
      scenario: loaded.settings.scenario,
      source: settingsSource(o),
      files: {
        mlperfConf: usesConfigFiles(o) ? (o.mlperfConf ?? 'builtin') : null,
        userConf: o.userConf ?? null,
        auditConf: o.auditConf ?? null,
      },
      settings: Object.fromEntries(rows.map((r) => [r.name, r.value])),
      provenance: Object.fromEntries(rows.map((r) => [r.name, r.source])),
      effective,
      qsl: { totalSampleCount: total, performanceSampleCount: performance },
      returnCodes: loaded.returnCodes,
      messages: loaded.messages,
      derivationErrors: loggedErrors,
      warnings: loaded.warnings,
    };
    process.stdout.write(`${JSON.stringify(out, jsonReplacer, 2)}\n`);
    return 0;
  }
  const lines: string[] = [];
  if (usesConfigFiles(o)) {
    lines.push(`Settings for model ${o.model ?? '*'}, scenario ${String(loaded.settings.scenario)}`);
    lines.push(`  mlperf.conf : ${o.mlperfConf ?? BUILTIN_MLPERF_CONF}`);
  } else {
    lines.push(`Settings of a run without --model, --user-conf or --mlperf-conf (what \`npx loadgen run\` and \`npx loadgen trace\` use), scenario ${String(loaded.settings.scenario)}`);
    lines.push('  mlperf.conf : not read (--model NAME reads it: a benchmark\'s durations, latency bounds and the official seeds)');
  }
  lines.push(`  user.conf   : ${o.userConf ?? '(none)'}`);
  lines.push(`  audit.config: ${o.auditConf ?? '(none)'}`);
  lines.push(`  source      : ${settingsSource(o)}`);
  if (!usesConfigFiles(o)) {
    lines.push('  (--sut null and null-native add defaults of their own for the fields they need and say which; the demo sizes its rates)');
  }
  lines.push('', 'Requested settings (value, then where it came from):');
  const width = Math.max(...rows.map((r) => r.name.length));
  const valueWidth = Math.max(...rows.map((r) => show(r.value).length));
  for (const r of rows) lines.push(`  ${r.name.padEnd(width)}  ${show(r.value).padEnd(valueWidth)}  ${r.source.description}`);
  lines.push('', `Effective settings (QSL total ${total}, performance ${performance}):`);
  const effWidth = Math.max(...Object.keys(effective).map((k) => k.length));
  for (const [k, v] of Object.entries(effective)) lines.push(`  ${k.padEnd(effWidth)}  ${show(v)}`);
  for (const e of loggedErrors) lines.push(`  (the reference would log ${e.key}: ${e.valueText})`);
  process.stdout.write(`${lines.join('\n')}\n`);
  for (const w of loaded.warnings) process.stderr.write(`loadgen: warning: ${w}\n`);
  return 0;
}

/** Adds the config-file options to a command (`run` and `settings`). */
export function addConfigOptions(command: Command): Command {
  return command
    .option('--mlperf-conf <file>', 'mlperf.conf replacing the built-in copy (LoadGen 6.0.17)')
    .option('--user-conf <file>', 'user.conf applied after mlperf.conf')
    .option('--model <name>', "model name for config lookups (<model>.<scenario>.<key>; '*': the wildcard lines only); without it, --user-conf or --mlperf-conf no config file is read: the TestSettings defaults. loadgen run --sut openai|kserve: the served model (config lookups: --config-model)")
    .option('--lenient', "apply config files exactly as the reference does; problems become warnings");
}

/** Registers `loadgen settings`. */
export function registerSettingsCommand(program: Command): void {
  const command = program
    .command('settings')
    .description('print the effective settings of a model and scenario and where each value came from');
  addConfigOptions(command)
    .option('--audit-conf <file>', 'audit.config applied last (model *), as startTest does')
    .addOption(choiceOption('--scenario <name>', 'test scenario (default SingleStream)', SCENARIOS))
    .addOption(choiceOption('--mode <name>', 'test mode', TEST_MODES))
    .option('--set <key=value>', 'any TestSettings field by its reference name, applied after the config files (repeatable)', collect, [])
    .option('--qsl-total <n>', 'QSL total sample count for the effective settings', positiveInteger('--qsl-total'), 1024)
    .option('--qsl-performance <n>', 'QSL performance sample count (default: --qsl-total)', positiveInteger('--qsl-performance'))
    .option('--json', 'print JSON instead of a table')
    .addHelpText(
      'after',
      '\nOrder: mlperf.conf < user.conf < --set/--mode < audit.config (as the reference applies them). Without\n' +
        '--model, --user-conf or --mlperf-conf no config file is read, as in `run` and `trace`: the TestSettings defaults.\n' +
        'Exit status: 0 printed, 2 bad input (a config problem names its file, line and key).\n' +
        'Example:\n  npx loadgen settings --user-conf user.conf --model resnet50 --scenario Server',
    )
    .action((options: SettingsOptions) => {
      process.exitCode = settingsCommand(options);
    });
}
