/**
 * settings_derivation.json: config files applied as FromConfig does, the
 * effective settings and what the reference logs about them.
 */
import { nativeSettingsFromReference } from '../cli/trace.js';
import { firstDifference, firstOf, logEntries, logObjectDifference, show } from './compare.js';
import { caseId, casesOf, conformance, optional, type Json, type Runner } from './case-runner.js';

function userConfText(v: unknown, what: string): string | null {
  const u = v as { text?: unknown; missing?: unknown } | undefined;
  if (u?.missing === true) return null;
  if (typeof u?.text === 'string') return u.text;
  throw new Error(`${what}: expected {text} or {missing: true}`);
}

export async function checkSettingsDerivation(r: Runner, file: string, json: Json): Promise<void> {
  const cases = casesOf(json);
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i]!;
    await r.check(file, caseId(c, i), () => {
      const mlperf = c.mlperf_conf as { source?: string; text?: string } | undefined;
      if (mlperf !== undefined && mlperf.source !== 'builtin' && typeof mlperf.text !== 'string') {
        return `mlperf_conf: unsupported source ${show(mlperf.source)}`;
      }
      const qsl = c.qsl as { total_sample_count: number; performance_sample_count: number };
      const result = conformance().configDerive({
        ...(mlperf?.source === 'builtin' || mlperf === undefined ? {} : { mlperfConfText: mlperf.text }),
        userConfText: userConfText(c.user_conf, 'user_conf'),
        ...(c.user_conf_second_call === undefined
          ? {}
          : { secondUserConfText: userConfText(c.user_conf_second_call, 'user_conf_second_call') }),
        model: String(c.model),
        scenario: String(c.config_scenario),
        initial: nativeSettingsFromReference(c.initial_settings),
        qslTotal: qsl.total_sample_count,
        qslPerformance: qsl.performance_sample_count,
      });
      return firstOf(
        () => optional(c, 'from_config_return_code', result.returnCode),
        () => optional(c, 'second_from_config_return_code', result.secondReturnCode),
        () => optional(c, 'settings_after_from_config', result.settingsAfter),
        () => optional(c, 'effective', result.effective),
        () =>
          c.logged_requested === undefined
            ? undefined
            : logObjectDifference(c.logged_requested as Json, result.loggedRequested, 'logged_requested'),
        () =>
          c.logged_effective === undefined
            ? undefined
            : logObjectDifference(c.logged_effective as Json, result.loggedEffective, 'logged_effective'),
        () => firstDifference(c.logged_errors ?? [], logEntries(result.loggedErrors), 'logged_errors'),
      );
    });
  }
}
