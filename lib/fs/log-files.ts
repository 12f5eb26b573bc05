/**
 * The names of the files a run writes beside its logs, and the reader of the
 * detail log's `:::MLLOG` lines: what the run, the rules checker and the
 * report share.
 */
import { basename } from 'node:path';

import type { SutReport } from '../types/api.js';

const FRAME = '='.repeat(48);

/** One line of mlperf_log_detail.txt. */
export interface DetailEntry {
  key: string;
  value: unknown;
  metadata?: { is_error?: boolean; is_warning?: boolean };
}

/**
 * The report data file name of a run, as the core names it:
 * `loadgen_[<datetime>_]report_data<suffix>.json`.
 */
export function reportDataFileName(testDatetime: string, suffix = '', prefixWithDatetime = false): string {
  return `loadgen_${prefixWithDatetime ? `${testDatetime}_` : ''}report_data${suffix}.json`;
}

/** report.html's name beside a data file: `[<datetime>_]report<suffix>.html`. */
export function reportFileNameFor(dataFile: string): string {
  return basename(dataFile).replace(/^loadgen_/, '').replace('report_data', 'report').replace(/\.json$/, '.html');
}

/** The entries of a detail log (lines that are not `:::MLLOG {json}` are skipped). */
export function parseDetailLog(text: string): DetailEntry[] {
  const out: DetailEntry[] = [];
  for (const line of text.split('\n')) {
    const at = line.indexOf(':::MLLOG ');
    if (at < 0) continue;
    try {
      out.push(JSON.parse(line.slice(at + 9)) as DetailEntry);
    } catch {
      // A line the SUT's own output interleaved with: not ours to judge here.
    }
  }
  return out;
}

/** The summary block of a report: a blank line, the framed title, the lines. */
export function formatSutReportBlock(report: SutReport): string {
  return `\n${FRAME}\n${report.title}\n${FRAME}\n${report.lines.map((l) => `${l}\n`).join('')}`;
}
