/**
 * After a Server token run: which TTFT/TPOT limits applied (the model's,
 * Server or Interactive, from which config line or setting), the checker's
 * own limits for the model and its test of the run, and the goodput.
 * Into `result.tokens.limits`, a block of the summary after the loadgen
 * overhead block (every line the reference's tools read stays where it
 * was) and the report data (`token_limits`).
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

import type { SettingsOrigin } from '../config/load-settings.js';
import { isInteractiveModel, limitMs, limitsFor, LLM_LIMITS_SOURCE } from '../config/llm-latency-limits.js';
import { reportDataFileName } from '../fs/log-files.js';
import type { ResolvedLogSettings, TestSettings, TestSettingsInput } from '../types/settings.js';
import { appendToReportData, formatSutReportBlock } from './sut-report.js';
import type { TestResult, TokenLimits } from '../types/api.js';

/** The summary block's title. */
export const TOKEN_LIMITS_TITLE = 'Token Latency Limits (loadgen for Node.js)';

/** Where one limit came from, in words. */
function sourceOf(field: keyof TestSettings, origin: SettingsOrigin | undefined, input: TestSettingsInput, sutDefaults: TestSettingsInput | undefined): string {
  const source = origin?.provenance.get(field);
  if (source !== undefined && source.origin !== 'default') return source.description;
  if (origin === undefined && input[field] !== undefined) return 'the settings passed to startTest';
  if (sutDefaults?.[field] !== undefined) return "the SUT's defaultSettings";
  return "LoadGen's default (no config line or setting gave it)";
}

/** The limits of a finished Server token run, or undefined for any other run. */
export function tokenLimitsOf(
  result: TestResult,
  origin: SettingsOrigin | undefined,
  input: TestSettingsInput,
  sutDefaults?: TestSettingsInput,
): TokenLimits | undefined {
  const tokens = result.tokens;
  const effective = result.effectiveSettings;
  if (result.scenario !== 'Server' || tokens?.ttftNs === undefined || tokens.tpotNs === undefined || effective.useTokenLatencies !== true) return undefined;
  const model = origin !== undefined && origin.model !== '*' ? origin.model : undefined;
  const limits: TokenLimits = {
    ...(model !== undefined ? { model } : {}),
    scenario: model !== undefined && isInteractiveModel(model) ? 'Interactive' : 'Server',
    ttftNs: Number(effective.serverTtftLatency),
    tpotNs: Number(effective.serverTpotLatency),
    ttftSource: sourceOf('serverTtftLatency', origin, input, sutDefaults),
    tpotSource: sourceOf('serverTpotLatency', origin, input, sutDefaults),
  };
  const checker = model !== undefined ? limitsFor(model, 'Server') : undefined;
  if (checker !== undefined) {
    limits.checker = {
      benchmark: checker.benchmark, scenario: checker.scenario, ttftNs: checker.ttftNs, tpotNs: checker.tpotNs,
      ttftMet: tokens.ttftNs.percentiles[99] < checker.ttftNs,
      tpotMet: tokens.tpotNs.percentiles[99] < checker.tpotNs,
    };
  }
  return limits;
}

/** A label padded as the summary's own (32 characters before ': '). */
function line(label: string, value: string): string {
  return `${label.padEnd(32)}: ${value}`;
}

/** The summary block's lines. */
export function tokenLimitLines(result: TestResult, limits: TokenLimits): string[] {
  const out: string[] = [];
  const which = limits.scenario === 'Interactive' ? 'Interactive (a Server run held to the Interactive limits)' : 'Server';
  out.push(line('Limits of', `${limits.model ?? '(no model: the settings did not come from config files)'}, ${which}`));
  out.push(line('TTFT limit (ns)', `${limits.ttftNs} (${limits.ttftSource})`));
  out.push(line('TPOT limit (ns)', `${limits.tpotNs} (${limits.tpotSource})`));
  const c = limits.checker;
  if (c !== undefined) {
    const same = c.ttftNs === limits.ttftNs && c.tpotNs === limits.tpotNs;
    out.push(line("Checker's limits", `${c.benchmark} ${c.scenario}: TTFT ${limitMs(c.ttftNs)}, TPOT ${limitMs(c.tpotNs)}: ${same ? 'the same as the run\'s' : 'NOT the run\'s'}`));
    const t = result.tokens!;
    out.push(line("Checker's test", `p99 TTFT ${t.ttftNs!.percentiles[99]} ns < ${c.ttftNs}: ${c.ttftMet ? 'yes' : 'NO'}; ` +
      `p99 TPOT ${t.tpotNs!.percentiles[99]} ns < ${c.tpotNs}: ${c.tpotMet ? 'yes' : 'NO'}`));
  } else if (limits.model !== undefined) {
    out.push(line("Checker's limits", `none for ${limits.model} (not an LLM benchmark of its table)`));
  }
  const g = result.tokens?.goodput;
  if (g !== undefined) {
    out.push(line('Goodput', `${(g.share * 100).toFixed(2)} % (${g.withinLimits} of ${g.issuedSamples} issued samples within both limits)`));
  }
  out.push('Goodput = issued samples that succeeded with TTFT <= the TTFT limit and TPOT <= the TPOT limit');
  out.push('(2 or more output tokens), over all issued samples.');
  if (c !== undefined) out.push(`Checker: ${LLM_LIMITS_SOURCE}; it reads result_first_token_99.00_percentile_latency_ns and result_time_per_output_token_99.00_percentile_ns.`);
  return out;
}

/**
 * Adds the limits to a finished Server token run's result, its summary file
 * (and stdout when the summary is copied there) and its report data.
 * Nothing for any other run. A write that fails loses only the block in
 * the file: the result keeps it.
 */
export function addTokenLimits(
  result: TestResult,
  log: ResolvedLogSettings,
  origin: SettingsOrigin | undefined,
  input: TestSettingsInput,
  sutDefaults?: TestSettingsInput,
): void {
  const limits = tokenLimitsOf(result, origin, input, sutDefaults);
  if (limits === undefined) return;
  result.tokens!.limits = limits;
  const block = formatSutReportBlock({ title: TOKEN_LIMITS_TITLE, lines: tokenLimitLines(result, limits) });
  result.summaryText += block;
  try {
    if (result.files.summary !== undefined) appendFileSync(result.files.summary, block);
    if (log.copySummaryToStdout) process.stdout.write(block);
    appendToReportData(join(log.outdir, reportDataFileName(result.testDatetime, log.suffix, log.prefixWithDatetime)), { token_limits: limits });
  } catch (error) {
    process.emitWarning(`loadgen: the token limits block was not written to the logs: ${(error as Error).message}`);
  }
}
