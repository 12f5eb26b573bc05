/**
 * `loadgen run --power SOURCE [--power-command CMD] [--power-interval-ms N]`:
 * the options, and the startTest `power` option they make.
 */
import { Option, type Command } from 'commander';

import { SettingsError } from '../errors.js';
import { echo } from '../settings/messages.js';
import {
  checkPowerOptions,
  DEFAULT_POWER_INTERVAL_MS,
  MAX_POWER_INTERVAL_MS,
  MIN_POWER_INTERVAL_MS,
  POWER_SOURCES,
  type PowerOptions,
} from '../power/sources.js';
import { choiceOption } from './options.js';

/** The power options as commander parses them. */
export interface PowerCliOptions {
  power?: string;
  powerCommand?: string;
  powerIntervalMs?: string;
}

/** Adds the power options to `loadgen run`. */
export function addPowerOptions(command: Command): void {
  command
    .addOption(choiceOption('--power <source>', 'measure power during the run: Linux powercap RAPL counters, NVIDIA GPUs, or --power-command', POWER_SOURCES))
    .addOption(new Option('--power-command <cmd>', "a shell command printing the current power in watts (one number), run once per reading; implies --power command"))
    .addOption(new Option('--power-interval-ms <ms>', `time between power readings, ${MIN_POWER_INTERVAL_MS}..${MAX_POWER_INTERVAL_MS} (default ${DEFAULT_POWER_INTERVAL_MS}; the power rules want >= 1 reading/s)`))
    .addHelpText('after', '\nPower: result.power (--json), a "Power" block at the end of the summary and a power plot in report.html;\n' +
      'fewer than 60 readings, gaps over 1 s or failed readings are flagged. An unreadable source exits 2 before the run.');
}

/** startTest's `power` option from the CLI's, or undefined; a SettingsError (exit 2) names a bad one. */
export function powerFromCli(options: PowerCliOptions): PowerOptions | undefined {
  const { power, powerCommand, powerIntervalMs } = options;
  if (power === undefined && powerCommand === undefined) {
    if (powerIntervalMs !== undefined) throw new SettingsError('--power-interval-ms', powerIntervalMs, '--power-interval-ms applies only with --power or --power-command');
    return undefined;
  }
  const source = power ?? 'command';
  if (powerCommand !== undefined && source !== 'command') {
    throw new SettingsError('--power-command', powerCommand, `--power-command applies to --power command, not --power ${source}`);
  }
  if (source === 'command' && powerCommand === undefined) {
    throw new SettingsError('--power', source, '--power command needs --power-command CMD (a command that prints watts)');
  }
  let intervalMs: number | undefined;
  if (powerIntervalMs !== undefined) {
    intervalMs = /^\d+$/.test(powerIntervalMs) ? Number(powerIntervalMs) : NaN;
    if (!(intervalMs >= MIN_POWER_INTERVAL_MS && intervalMs <= MAX_POWER_INTERVAL_MS)) {
      throw new SettingsError('--power-interval-ms', powerIntervalMs,
        `--power-interval-ms must be an integer from ${MIN_POWER_INTERVAL_MS} to ${MAX_POWER_INTERVAL_MS} (the power rules want at least one reading a second), got '${echo(powerIntervalMs)}'`);
    }
  }
  return checkPowerOptions({
    source,
    ...(powerCommand !== undefined ? { command: powerCommand } : {}),
    ...(intervalMs !== undefined ? { intervalMs } : {}),
  });
}
