/**
 * The config files' public types: sources, roles, the options and result of
 * loadSettings, provenance, and the audit.config result.
 */
import type { NativeMessage } from '../native/index.js';
import type { Scenario, TestSettings, TestSettingsInput } from '../types/settings.js';

/** A config file: a path (string or `{ path }`), or inline text with an optional display name. */
export type ConfigSource = string | { readonly path: string } | { readonly text: string; readonly name?: string };

/** Which kind of config file: decides which keys it may set (spec/10 §4). */
export type ConfigRole = 'mlperf.conf' | 'user.conf' | 'audit.config';

/** Settings applied on top of the config files (before audit.config), e.g. CLI `--set`. */
export interface SettingsLayer {
  /** How provenance names this layer, e.g. `--set`. */
  readonly label: string;
  readonly settings: TestSettingsInput;
}

/** Options of {@link loadSettings}. */
export interface LoadSettingsOptions {
  /**
   * The system config. Default `'builtin'`: the mlperf.conf compiled into
   * loadgen (LoadGen 6.0.17's). A source replaces it; `false` skips it (only
   * allowed without a user.conf, which always applies mlperf.conf first).
   */
  readonly mlperfConf?: ConfigSource | 'builtin' | false;
  /** user.conf, applied after mlperf.conf (FromConfig with conf_type 1). */
  readonly userConf?: ConfigSource;
  /** audit.config, applied last (model `*`, as StartTest does). */
  readonly auditConf?: ConfigSource;
  /** Model name used for the lookups (`<model>.<scenario>.<key>`); `*` matches only wildcard lines. */
  readonly model: string;
  /** Scenario of the run; also the scenario used for the lookups. */
  readonly scenario: Scenario;
  /** Apply exactly as the reference does; lint problems become warnings. Default false. */
  readonly lenient?: boolean;
  /** Settings before the config files (the reference's TestSettings the user filled in first). */
  readonly base?: TestSettingsInput;
  /** Applied after user.conf and before audit.config, in order. */
  readonly overrides?: readonly SettingsLayer[];
}

/** Where a setting's value came from. */
export type SettingOrigin = 'default' | 'base' | 'argument' | 'mlperf.conf' | 'user.conf' | 'override' | 'audit.config';

/** The source of one setting's effective value. */
export interface SettingSource {
  /** camelCase field name. */
  readonly field: keyof TestSettings;
  /** Reference snake_case field name. */
  readonly snake: string;
  readonly origin: SettingOrigin;
  /** mlperf.conf origin: true for the built-in copy. */
  readonly builtin?: boolean;
  /** Config origins: the file path or name, the 1-based line, the full key that matched and the raw value. */
  readonly file?: string;
  readonly line?: number;
  readonly key?: string;
  readonly value?: string;
  /** Override origin: the layer label (e.g. `--set`). */
  readonly label?: string;
  /** One-line description, e.g. `user.conf:3 resnet50.Server.target_qps = 100`. */
  readonly description: string;
}

/** Result of {@link loadSettings}. */
export interface LoadedSettings {
  /** Every test setting, camelCase, ready for startTest. */
  readonly settings: TestSettingsInput;
  /** Source of every field, in SETTINGS_FIELDS order. */
  readonly provenance: Map<keyof TestSettings, SettingSource>;
  /** Problems that did not stop loading (lint warnings; in lenient mode also lint errors and reference errors). */
  readonly warnings: string[];
  /** The reference TestSettings after everything (snake_case, enums as names, exact uint64 as bigint when large). */
  readonly referenceSettings: Record<string, number | bigint | boolean | string>;
  /** FromConfig return codes: 0 ok, -2 file not opened, -22 a line did not parse (nothing applied from the file). */
  readonly returnCodes: { readonly mlperf?: number; readonly user?: number; readonly audit?: number };
  /** What the reference would log while loading (errors, the audit warning), in order. */
  readonly messages: NativeMessage[];
}

/** Result of {@link applyAuditConfig}. */
export interface AuditConfigResult {
  /** False when the file could not be opened (nothing applied, as in the reference). */
  readonly found: boolean;
  readonly settings: TestSettingsInput;
  /** What the reference logs (the fixed warning, FromConfig errors): goes to the detail log. */
  readonly messages: NativeMessage[];
  readonly warnings: string[];
}

