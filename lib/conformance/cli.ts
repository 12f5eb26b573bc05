#!/usr/bin/env node
/**
 * `npm run conformance -- <dir>`: checks this implementation against a
 * directory of reference vectors laid out like the golden set. Prints one
 * line per case and the totals; exits 0 only when every case passed (and at
 * least one was found), 1 when any failed, 2 on bad usage.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

import { runConformance } from './conformance.js';

async function main(argv: string[]): Promise<number> {
  const dir = argv[0];
  if (dir === undefined || argv.length > 1 || dir === '--help' || dir === '-h') {
    process.stderr.write('usage: node dist/conformance/cli.js <vector-dir>   (e.g. ../shared/golden)\n');
    return 2;
  }
  const path = resolve(process.cwd(), dir);
  if (!existsSync(path) || !statSync(path).isDirectory()) {
    process.stderr.write(`conformance: ${dir} is not a directory\n`);
    return 2;
  }
  const totals = await runConformance(path, { write: (line) => process.stdout.write(`${line}\n`) });
  if (totals.passed + totals.failed === 0) {
    process.stderr.write(`conformance: no vector files found in ${dir}\n`);
    return 1;
  }
  return totals.failed > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`conformance: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
