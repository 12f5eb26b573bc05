/**
 * The files a run writes into its outdir, by exact name, and their removal
 * before the run opens any: a run that ends early (a signal, a failure) must
 * never leave an earlier run's summary or report beside its own detail log.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';

import { LogOutputError } from '../errors.js';
import { reportDataFileName, reportFileNameFor } from '../fs/log-files.js';
import type { ResolvedLogSettings } from '../types/settings.js';

/**
 * The names of the files a run with these log settings writes (or may
 * write) in its outdir: the summary, detail, accuracy and trace logs
 * (native/run_log.cc), the report data (native/report_data.cc) and the
 * report.html the CLI writes from it (lib/report/report.ts). Empty with
 * `prefixWithDatetime`: those names hold the run's own date and time, so an
 * earlier run's files never have them.
 */
export function runFileNames(log: ResolvedLogSettings): string[] {
  if (log.prefixWithDatetime) return [];
  const { prefix, suffix } = log;
  const dataFile = reportDataFileName('', suffix, false);
  return [
    `${prefix}summary${suffix}.txt`,
    `${prefix}detail${suffix}.txt`,
    `${prefix}accuracy${suffix}.json`,
    `${prefix}trace${suffix}.json`,
    dataFile,
    reportFileNameFor(dataFile),
  ];
}

/**
 * Removes what an earlier run left under {@link runFileNames} in
 * `log.outdir` (absent files are fine). Nothing else is touched. Throws a
 * LogOutputError naming the file when one exists and cannot be removed
 * (e.g. a directory of that name): the run could not write it either.
 */
export function removeStaleRunFiles(log: ResolvedLogSettings): void {
  for (const name of runFileNames(log)) {
    const path = join(log.outdir, name);
    try {
      rmSync(path, { force: true });
    } catch (cause) {
      throw new LogOutputError(`cannot remove '${path}', which an earlier run left and this run writes: ${(cause as Error).message}`, cause);
    }
  }
}
