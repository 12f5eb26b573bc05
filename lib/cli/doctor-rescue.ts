/**
 * `loadgen doctor` when no native binary loads: the CLI's other modules load
 * the addon as they are imported (setting limits come from the core), so
 * this module, imported first by lib/cli.ts, prints the report (saying why
 * none loads) and exits 3 before they are. With a binary that loads, it does
 * nothing and the command runs as registered (doctor-command.ts).
 */
import { doctorReport, formatDoctorReport } from '../platform/doctor.js';
import { EXIT_RUN_FAILED } from './exit-codes.js';

const [command, ...rest] = process.argv.slice(2);
if (command === 'doctor' && !rest.some((a) => a === '--help' || a === '-h')) {
  const report = doctorReport();
  if (report.binary.path === null) {
    const json = rest.includes('--json');
    process.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : `${formatDoctorReport(report)}\n`);
    process.exit(EXIT_RUN_FAILED);
  }
}
