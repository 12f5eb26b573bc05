/**
 * The human-readable report of `loadgen accuracy`: the figures as
 * MLCommons' evaluator prints them, what was read (ids or text, dtype,
 * sentence splitter, counts) and, with a benchmark, one line per target.
 */
import { pythonFloatRepr } from './numeric.js';
import type { AccuracyReport, AccuracyVerdict } from './score.js';

/** Integral figures print as Python ints (gen_len, gen_num, …), the others as Python floats. */
const INTEGER_METRICS = new Set(['gen_len', 'gen_num', 'gen_tok_len', 'good', 'total']);

function figure(metric: string, value: number): string {
  return INTEGER_METRICS.has(metric) ? String(value) : pythonFloatRepr(value);
}

/** The figures as one Python dict, as MLCommons' evaluators print their results. */
export function mlcommonsResultLine(metrics: Readonly<Record<string, number>>): string {
  return `{${Object.entries(metrics).map(([k, v]) => `'${k}': ${figure(k, v)}`).join(', ')}}`;
}

function verdictLine(v: AccuracyVerdict): string {
  const relation = v.bound === 'min' ? '>=' : '<=';
  const share = `${Number((v.fraction * 100).toFixed(1))} % of ${v.reference}`;
  const value = v.value === null ? 'n/a' : figure(v.metric, v.value);
  const status = v.status === 'pass' ? 'PASS' : v.status === 'fail' ? 'FAIL' : 'NOT SCORED';
  const reason = v.status === 'not scored' ? ` (${v.notScored ?? 'not computed from this log'})` : '';
  return `  ${status.padEnd(10)} ${v.metric.padEnd(18)} ${value.padStart(12)} ${relation} ${pythonFloatRepr(v.threshold)} (${share}; ${v.source})${reason}`;
}

/** The report as text. */
export function formatAccuracyReport(report: AccuracyReport): string {
  const lines: string[] = [];
  lines.push(`Accuracy log: ${report.logFile}`);
  if (report.datasetFile !== undefined) lines.push(`Data set:     ${report.datasetFile}`);
  const data = report.logData === 'token-ids' ? `token ids (${report.accuracyDtype}, decoded with special tokens skipped${report.cleanUpTokenizationSpaces ? ', tokenization spaces cleaned up' : ''})`
    : report.logData === 'text' ? 'UTF-8 text (no token ids in this log)' : `${report.accuracyDtype} values`;
  lines.push(`Log data:     ${data}`);
  const c = report.counts;
  lines.push(`Samples:      ${c.unique} scored (${c.entries} log entries, ${c.duplicates} duplicate qsl_idx dropped; ${c.referenceSamples} in the references)`);
  if (c.subsets !== undefined) lines.push(`Subsets:      ${Object.entries(c.subsets).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (report.sentenceSplitter !== undefined) {
    lines.push(`Sentences:    ${report.sentenceSplitter.kind === 'punkt' ? `NLTK's Punkt model from ${report.sentenceSplitter.source}` : report.sentenceSplitter.source}`);
  }
  if (report.tokenCounts !== undefined) lines.push(`Token counts: from the ${report.tokenCounts}`);
  lines.push('', 'Results', '', mlcommonsResultLine(report.metrics));
  if (report.verdicts !== undefined && report.benchmark !== undefined) {
    lines.push('', `Targets of ${report.benchmark}:`);
    for (const v of report.verdicts) lines.push(verdictLine(v));
    const failed = report.verdicts.filter((v) => v.status === 'fail').length;
    const unscored = report.verdicts.filter((v) => v.status === 'not scored').length;
    lines.push(
      '',
      report.passed === true
        ? `Accuracy: PASS (all ${report.verdicts.length} targets met)`
        : `Accuracy: ${failed > 0 ? 'FAIL' : 'INCOMPLETE'} (${failed} target${failed === 1 ? '' : 's'} missed, ${unscored} not scored)`,
    );
    for (const other of report.otherVariants ?? []) lines.push(`${other.benchmark}: ${other.passed ? 'would pass' : 'would not pass'}`);
  }
  return lines.join('\n');
}
