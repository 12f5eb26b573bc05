import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { repoRoot, tempDir } from './helpers.js';

describe('log settings: copies to stdout', () => {
  it('copySummaryToStdout and copyDetailToStdout echo both files, line for line', () => {
    const outdir = tempDir();
    const r = spawnSync(process.execPath, [join(repoRoot, 'test', 'fixtures', 'copy-to-stdout.mjs'), outdir], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const summary = readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8');
    const detail = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
    expect(r.stdout).toContain(summary);
    for (const line of detail.trimEnd().split('\n')) expect(r.stdout).toContain(line);
  });
});
