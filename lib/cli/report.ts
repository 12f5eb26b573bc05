/**
 * The CLI's progress display and HTML report around a run, and the
 * `loadgen report <logdir>` command. Shared by every command that runs a test.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { Command } from 'commander';

import { startProgress, type ProgressHandle } from '../report/progress.js';
import { reportDataFileName, writeReport } from '../report/report.js';
import type { TestResult } from '../types/api.js';

/** The run options that decide on progress and the report. */
export interface RunOutputOptions {
  quiet?: boolean;
  /** false with --no-progress. */
  progress?: boolean;
  /** false with --no-report. */
  report?: boolean;
  outdir: string;
  logSuffix?: string;
  prefixWithDatetime?: boolean;
}

/** Starts the progress display unless --quiet or --no-progress; always returns a handle to stop. */
export function runProgress(options: RunOutputOptions): ProgressHandle {
  if (options.quiet === true || options.progress === false) return { stop: () => undefined };
  return startProgress();
}

/**
 * Writes report.html beside the run's logs (unless --no-report) and returns
 * its path; undefined when skipped. A report that cannot be written is a
 * warning on stderr, never a failed run.
 */
export function writeRunReport(result: TestResult, options: RunOutputOptions): string | undefined {
  if (options.report === false) return undefined;
  const dataFile = join(options.outdir, reportDataFileName(result.testDatetime, options.logSuffix ?? '', options.prefixWithDatetime === true));
  if (!existsSync(dataFile)) return undefined;
  try {
    return writeReport(options.outdir, { dataFile });
  } catch (error) {
    process.stderr.write(`loadgen: warning: the HTML report was not written: ${(error as Error).message}\n`);
    return undefined;
  }
}

/** Adds `loadgen report <logdir>`. */
export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description('write a self-contained report.html (charts, verdict, settings) from a log folder')
    .argument('<logdir>', 'folder with the logs of a run (loadgen_report_data.json, mlperf_log_summary.txt, mlperf_log_detail.txt)')
    .option('--output <file>', 'where to write the page (default: report.html in the log folder)')
    .addHelpText(
      'after',
      '\nThe page needs no network access: the charting library (uPlot) and the data are inside it.\n' +
        'Exit status: 0 written, 2 bad input.',
    )
    .action((logdir: string, options: { output?: string }) => {
      const path = writeReport(logdir, options.output !== undefined ? { output: options.output } : {});
      process.stdout.write(`Report written to ${path}\n`);
      process.exitCode = 0;
    });
}
