/**
 * `loadgen doctor [--json]`: the platform, libc, Node and N-API versions, the
 * native binary in use and what it can do (lib/platform/doctor.ts). Exit 0
 * when the binary loads, 3 when none does (the report says why).
 */
import type { Command } from 'commander';

import { doctorReport, formatDoctorReport } from '../platform/doctor.js';
import { EXIT_RUN_FAILED, EXIT_VALID } from './exit-codes.js';

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('print the platform, the native binary in use (prebuild or source build) and what it supports')
    .option('--json', 'print the report as JSON')
    .action((options: { json?: boolean }) => {
      const report = doctorReport();
      process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatDoctorReport(report)}\n`);
      process.exitCode = report.binary.path ? EXIT_VALID : EXIT_RUN_FAILED;
    });
}
