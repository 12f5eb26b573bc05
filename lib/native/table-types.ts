/**
 * The shape of the addon's tables (exports.tables; lib/native/tables.ts reads
 * them), apart from the reading so that the addon's type can name them.
 * @internal
 */

/** How a config value becomes the field value (native/config_keys.h ConfigValue). */
export type ConfigConversion = 'int' | 'int32' | 'double' | 'eq1' | 'nonzero' | 'mode';

/** One row of the native config-key table. */
export interface NativeConfigKeyRow {
  readonly key: string;
  /** 'arg': the scenario asked for; else the fixed scenario the lookup uses. */
  readonly scenario: 'arg' | 'SingleStream' | 'MultiStream' | 'Server' | 'Offline';
  /** TestSettings field (snake_case). */
  readonly field: string;
  readonly conversion: ConfigConversion;
  readonly multiplier: number;
  /** Unit of the value in the file: 'ms', 'percent' or ''. */
  readonly unit: string;
  readonly mlperfOnly: boolean;
  /** Read only when this boolean field (snake_case) is already true. */
  readonly onlyWith?: string;
}

/** Inclusive limits of a run setting (snake_case name). */
export interface NativeRunSettingLimit {
  readonly min: number;
  readonly max: number;
}

/** exports.tables of the addon. */
export interface NativeTables {
  readonly testSettingsFields: readonly { readonly name: string; readonly kind: string }[];
  readonly configKeys: readonly NativeConfigKeyRow[];
  readonly runSettingLimits: Readonly<Record<string, NativeRunSettingLimit>>;
  /** How a sample can fail (native/failure_kinds.h), by the core's enum value. */
  readonly failureKinds: readonly string[];
  /** Float64 values per node of the native HTTP client's statistics (lib/net/node-stats.ts's NODE_SLICE_LENGTH). */
  readonly nodeStatsLength: number;
  /** The most client threads of the native transport (native/http_sut.h kMaxClientThreads). */
  readonly maxClientThreads: number;
}
