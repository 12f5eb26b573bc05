/**
 * loadSettings: mlperf.conf, user.conf, layers set in code and audit.config
 * applied in the reference's order (spec/10 §4, §5).
 *
 * The values are always computed by the native loader, which reproduces the
 * reference's `TestSettings::FromConfig` exactly (grammar quirks included).
 * Beyond the reference, every file is first linted: by default a line the
 * reference would misread, silently ignore or reject is a
 * {@link ConfigFileError}; `lenient: true` applies the files exactly as the
 * reference does and reports those problems as warnings.
 */
import { SettingsError } from '../errors.js';
import {
  loadNative,
  loadNativeInternals,
  type NativeEffectiveRecord,
  type NativeLogEntry,
  type NativeMessage,
  type NativeTestSettings,
} from '../native/index.js';
import { FIELD_BY_NAME, SETTINGS_FIELDS } from '../settings/fields.js';
import { echo, PATH_ECHO_LIMIT, show } from '../settings/messages.js';
import { resolveTestSettingFields, resolveTestSettings } from '../settings/resolve.js';
import { toNativeSettings } from '../settings/to-native.js';
import { SCENARIOS, type Scenario, type TestSettings, type TestSettingsInput } from '../types/settings.js';
import { validateSettingValue } from '../settings/validate.js';
import { lintConfigText } from './lint.js';
import { recordConfigProvenance, skippedConditionalLines } from './provenance.js';
import { fromNativeRecord, toCamelSettings, toNativeRecord } from './records.js';
import { checkReadable, nativeInput, Problems, readSource, reportNative } from './sources.js';
import type { LoadedSettings, LoadSettingsOptions, SettingSource } from './types.js';

/**
 * Loads mlperf.conf, user.conf and audit.config for a model and scenario as
 * the reference does (`FromConfig` with conf_type 1, then the StartTest
 * audit.config override), after linting each file. Throws
 * {@link ConfigFileError} (a {@link SettingsError}) listing every problem
 * unless `lenient`. The returned settings pass startTest's validation in
 * strict mode (a value loadgen cannot run is an error naming its config line).
 */
export function loadSettings(options: LoadSettingsOptions): LoadedSettings {
  const lenient = options.lenient === true;
  const problems = new Problems(lenient);
  if (typeof options.model !== 'string' || options.model === '' || /\s/.test(options.model)) {
    throw new SettingsError('model', options.model, `Invalid model ${show(options.model)}: expected a non-empty name without spaces (or '*').`);
  }
  const scenario = validateSettingValue('scenario', options.scenario) as Scenario;
  const baseInput: TestSettingsInput = { ...(options.base ?? {}), scenario };
  const base = resolveTestSettingFields(baseInput);

  const provenance = new Map<keyof TestSettings, SettingSource>();
  for (const f of SETTINGS_FIELDS) {
    const given = f.name === 'scenario' ? 'argument' : options.base?.[f.name] !== undefined ? 'base' : 'default';
    provenance.set(f.name, {
      field: f.name, snake: f.snake, origin: given,
      description: given === 'argument' ? 'scenario argument' : given === 'base' ? 'base settings' : 'default',
    });
  }

  // Read and lint every file first: nothing is applied if one is bad.
  const mlperfOpt = options.mlperfConf ?? 'builtin';
  if (mlperfOpt === false && options.userConf !== undefined) {
    throw new SettingsError('mlperfConf', false, 'mlperfConf: false cannot be combined with a user.conf: the reference always applies mlperf.conf with the first user.conf.');
  }
  const mlperf = mlperfOpt === 'builtin' || mlperfOpt === false ? undefined : readSource(mlperfOpt, 'mlperf.conf');
  const user = options.userConf === undefined ? undefined : readSource(options.userConf, 'user.conf');
  const audit = options.auditConf === undefined ? undefined : readSource(options.auditConf, 'audit.config');
  if (mlperf !== undefined) {
    if (mlperf.text === undefined) {
      throw new SettingsError('mlperfConf', mlperf.label, `${echo(mlperf.label, PATH_ECHO_LIMIT)}: cannot read the mlperf.conf file: ${echo(mlperf.readError ?? '', 2 * PATH_ECHO_LIMIT)}`);
    }
    problems.add(lintConfigText(mlperf.text, mlperf.label, 'mlperf.conf'));
  }
  for (const [s, role] of [[user, 'user.conf'], [audit, 'audit.config']] as const) {
    if (s === undefined) continue;
    checkReadable(s, role, problems);
    if (s.text !== undefined) problems.add(lintConfigText(s.text, s.label, role));
  }
  problems.throwIfAny();

  const native = loadNative().config;
  const mlperfLabel = mlperf?.label ?? 'mlperf.conf (built-in)';
  const builtin = mlperf === undefined;
  const messages: NativeMessage[] = [];
  const returnCodes: { mlperf?: number; user?: number; audit?: number } = {};
  let record: NativeTestSettings = toNativeSettings(base);

  // 1. mlperf.conf + user.conf (one FromConfig call with conf_type 1, or mlperf.conf alone).
  if (mlperfOpt !== false || user !== undefined) {
    const r = native.load({
      model: options.model, scenario, base: record,
      ...(mlperf ? nativeInput('mlperfConf', mlperf) : {}),
      ...(user ? nativeInput('userConf', user) : {}),
    });
    reportNative(r, { mlperf: mlperfLabel, ...(user ? { user: user.label } : {}) }, problems);
    recordConfigProvenance(provenance, r.provenance, builtin);
    messages.push(...r.messages);
    Object.assign(returnCodes, r.returnCodes);
    record = toNativeRecord(r.settings);
    if (user?.text !== undefined && r.returnCodes.user === 0) {
      problems.add(skippedConditionalLines(user.text, user.label, options.model, r.provenance, r.settings).map((message) => ({
        severity: 'warning' as const, file: user.label, line: 0, key: '', value: '', text: message, message,
      })));
    }
  }

  // 2. Layers set in code / on the command line.
  for (const layer of options.overrides ?? []) {
    for (const [name, value] of Object.entries(layer.settings) as [keyof TestSettings, unknown][]) {
      if (value === undefined) continue;
      const f = FIELD_BY_NAME.get(name);
      const stored = validateSettingValue(name, value);
      if (f === undefined) continue;
      record[f.snake] = f.kind === 'enum' ? (f.constraints.values ?? []).indexOf(stored as string) : (stored as number | bigint | boolean);
      provenance.set(f.name, { field: f.name, snake: f.snake, origin: 'override', label: layer.label, description: layer.label });
    }
  }
  if (record.scenario !== SCENARIOS.indexOf(scenario)) {
    throw new SettingsError('scenario', SCENARIOS[Number(record.scenario)], `Invalid override scenario = ${SCENARIOS[Number(record.scenario)]}: the configs were loaded for scenario ${scenario}; change the scenario argument instead.`);
  }

  // 3. audit.config, as StartTest applies it.
  let referenceSettings: Record<string, number | bigint | boolean | string>;
  if (audit !== undefined && audit.text !== undefined) {
    const r = native.load({ model: '*', scenario, base: record, withMlperfConf: false, ...nativeInput('auditConf', audit) });
    reportNative(r, { mlperf: mlperfLabel, audit: audit.label }, problems);
    recordConfigProvenance(provenance, r.provenance, builtin);
    messages.push(...r.messages);
    if (r.returnCodes.audit !== undefined) returnCodes.audit = r.returnCodes.audit;
    referenceSettings = r.settings;
  } else {
    referenceSettings = fromNativeRecord(record);
  }
  problems.throwIfAny();

  const settings = toCamelSettings(referenceSettings, base, problems);
  // Cross-field rules and anything else startTest would reject.
  try {
    resolveTestSettings(settings);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    const src = provenance.get(error.key as keyof TestSettings);
    const where = src && src.origin !== 'default' ? ` (${error.key} comes from ${src.description})` : '';
    if (!lenient) throw new SettingsError(error.key, error.value, `${error.message}${where}`);
    problems.warnings.push(`startTest will reject these settings: ${error.message}${where}`);
  }
  const defaulted = new Set<string>();
  for (const [field, source] of provenance) if (source.origin === 'default') defaulted.add(field);
  defaultedFields.set(settings, defaulted);
  loadedOrigins.set(settings, { model: options.model, provenance });
  return { settings, provenance, warnings: problems.warnings, referenceSettings, returnCodes, messages };
}

/** Where a loadSettings() result came from: the model its config lines were looked up under, and each field's source. */
export interface SettingsOrigin {
  readonly model: string;
  readonly provenance: ReadonlyMap<keyof TestSettings, SettingSource>;
}

const loadedOrigins = new WeakMap<object, SettingsOrigin>();

/**
 * The model and sources of `settings` when it is the very object a
 * loadSettings() call returned (startTest says where a run's token limits
 * came from); undefined for any other object.
 */
export function settingsOriginOf(settings: object): SettingsOrigin | undefined {
  return loadedOrigins.get(settings);
}

// The fields of loadSettings() results that nothing set (their origin is
// 'default'): a SUT's defaultSettings may fill them in (startTest).
const defaultedFields = new WeakMap<object, ReadonlySet<string>>();

/**
 * The fields of `settings` that only hold the defaults, when `settings` is
 * the very object a loadSettings() call returned; undefined for any other.
 */
export function defaultedSettingFields(settings: object): ReadonlySet<string> | undefined {
  return defaultedFields.get(settings);
}

/** Effective settings (spec/10 §3) of loaded settings, as StartTest derives them (test05 applied). */
export function deriveEffectiveSettings(
  loaded: Pick<LoadedSettings, 'referenceSettings'>,
  qslTotal: number,
  qslPerformance: number,
): { effective: NativeEffectiveRecord; loggedErrors: NativeLogEntry[] } {
  return loadNativeInternals().conformance.deriveEffective(toNativeRecord(loaded.referenceSettings), qslTotal, qslPerformance, true);
}
