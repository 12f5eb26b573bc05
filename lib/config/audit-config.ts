/**
 * The audit.config override of StartTest (spec/10 §5): applied with model
 * `*` and the run's scenario on top of the requested settings, before test05
 * and the derivation of the effective settings.
 */
import { readFileSync } from 'node:fs';

import { loadNative, type NativeMessage } from '../native/index.js';
import { resolveTestSettingFields } from '../settings/resolve.js';
import { toNativeSettings } from '../settings/to-native.js';
import type { ResolvedTestSettings, TestSettingsInput } from '../types/settings.js';
import { lintConfigText } from './lint.js';
import { toCamelSettings } from './records.js';
import { Problems, reportNative } from './sources.js';
import type { AuditConfigResult } from './types.js';

/**
 * The audit.config override of StartTest (spec/10 §5): if `path` can be
 * read, lints it (strict unless `lenient`) and applies it with model `*` and
 * the settings' scenario on top of `settings`.
 */
export function applyAuditConfig(settings: TestSettingsInput, path: string, lenient = false): AuditConfigResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { found: false, settings, messages: [], warnings: [] };
  }
  const problems = new Problems(lenient);
  problems.add(lintConfigText(text, path, 'audit.config'));
  problems.throwIfAny();
  const base = resolveTestSettingFields(settings);
  const r = loadNative().config.load({
    model: '*', scenario: base.scenario, base: toNativeSettings(base), withMlperfConf: false, auditConfPath: path,
  });
  if (!r.auditFound) return { found: false, settings, messages: [], warnings: [] };
  reportNative(r, { mlperf: '', audit: path }, problems);
  problems.throwIfAny();
  return { found: true, settings: toCamelSettings(r.settings, base, problems), messages: r.messages, warnings: problems.warnings };
}

/** The audit.config file name the reference's StartTest uses by default. */
export const DEFAULT_AUDIT_CONFIG = 'audit.config';

/**
 * startTest's config layer: the audit.config at `path` (false: none) applied
 * on top of the requested settings when it can be read, with its fields
 * resolved again (a lenient file may set values loadgen rejects). Lint
 * warnings go to process.emitWarning; the reference's messages are returned
 * for the detail log.
 */
export function applyStartTestAuditConfig(
  requested: ResolvedTestSettings,
  path: string | false,
  lenient: boolean,
): { settings: ResolvedTestSettings; messages: NativeMessage[] } {
  if (path === false) return { settings: requested, messages: [] };
  const audit = applyAuditConfig(requested, path, lenient);
  if (!audit.found) return { settings: requested, messages: [] };
  const settings = resolveTestSettingFields(audit.settings);
  for (const warning of audit.warnings) process.emitWarning(warning, { code: 'LOADGEN_AUDIT_CONFIG' });
  return { settings, messages: audit.messages };
}
