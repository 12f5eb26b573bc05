/**
 * The CLI's config-file support: `loadgen settings` and the config options of
 * `loadgen run` (kept apart from cli.ts so each command stays small).
 */
import { Command } from 'commander';

import { deriveEffectiveSettings, loadSettings } from '../config/load-settings.js';
import { type LoadedSettings, type SettingsLayer } from '../config/types.js';
import { settingsFromAssignments } from '../settings/assignments.js';
import { SETTINGS_FIELDS } from '../settings/fields.js';
import { SCENARIOS, TEST_MODES, type Scenario, type TestSettingsInput } from '../settings/types.js';
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

/**
 * Settings from the config options: mlperf.conf and user.conf first, then
 * --set and --mode on top (the order of user code before StartTest), and
 * `auditConf` last when `withAudit`.
 */
export function loadCliSettings(o: ConfigCliOptions, withAudit: boolean): LoadedSettings {
  const fromSet = settingsFromAssignments(o.set);
  const scenario = (o.scenario ?? fromSet.scenario ?? 'SingleStream') as Scenario;
  const overrides: SettingsLayer[] = [];
  if (Object.keys(fromSet).length > 0) overrides.push({ label: '--set', settings: fromSet });
  if (o.mode !== undefined) overrides.push({ label: '--mode', settings: { mode: o.mode as TestSettingsInput['mode'] } });
  return loadSettings({
    ...(o.mlperfConf !== undefined ? { mlperfConf: o.mlperfConf } : {}),
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
      model: o.model ?? '*',
      scenario: loaded.settings.scenario,
      files: {
        mlperfConf: o.mlperfConf ?? 'builtin',
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
  lines.push(`Settings for model ${o.model ?? '*'}, scenario ${String(loaded.settings.scenario)}`);
  lines.push(`  mlperf.conf : ${o.mlperfConf ?? 'built-in (LoadGen 6.0.17)'}`);
  lines.push(`  user.conf   : ${o.userConf ?? '(none)'}`);
  lines.push(`  audit.config: ${o.auditConf ?? '(none)'}`);
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
    .option('--model <name>', "model name for config lookups (<model>.<scenario>.<key>); default '*'. loadgen run --sut openai|kserve: the served model (config lookups: --config-model)")
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
      '\nOrder: mlperf.conf < user.conf < --set/--mode < audit.config (as the reference applies them).\n' +
        'Exit status: 0 printed, 2 bad input (a config problem names its file, line and key).\n' +
        'Example:\n  loadgen settings --user-conf user.conf --model resnet50 --scenario Server',
    )
    .action((options: SettingsOptions) => {
      process.exitCode = settingsCommand(options);
    });
}
