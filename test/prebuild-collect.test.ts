/**
 * scripts/prebuild-collect.mjs (`npm run prebuild:collect`): gathers the CI
 * artifacts into prebuilds/ and refuses a release with a platform missing or
 * a binary in the wrong platform's folder.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { repoRoot, tempDir } from './helpers.js';

const script = join(repoRoot, 'scripts', 'prebuild-collect.mjs');

/** The first bytes of a shared library for `platform` (what the script reads). */
function header(platform: string): Buffer {
  const b = Buffer.alloc(256);
  if (platform.startsWith('linux-')) {
    b.writeUInt32BE(0x7f454c46, 0);
    b.writeUInt16LE(platform === 'linux-x64' ? 62 : 183, 18);
  } else if (platform.startsWith('darwin-')) {
    b.writeUInt32LE(0xfeedfacf, 0);
    b.writeUInt32LE(platform === 'darwin-x64' ? 0x01000007 : 0x0100000c, 4);
  } else {
    b.write('MZ', 0, 'latin1');
    b.writeUInt32LE(128, 60);
    b.write('PE\0\0', 128, 'latin1');
    b.writeUInt16LE(0x8664, 132);
  }
  return b;
}

const ALL = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'];

/** Artifacts as actions/download-artifact lays them out: one folder per artifact. */
function artifacts(files: Record<string, Buffer>): string {
  const dir = tempDir('loadgen-artifacts-');
  for (const [platform, bytes] of Object.entries(files)) {
    mkdirSync(join(dir, `prebuild-${platform}`, platform), { recursive: true });
    writeFileSync(join(dir, `prebuild-${platform}`, platform, 'loadgen.napi.node'), bytes);
  }
  return dir;
}

function collect(...args: string[]) {
  return spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', timeout: 30_000 });
}

describe('npm run prebuild:collect', () => {
  it('gathers every platform into the output folder and accepts the set', () => {
    const out = tempDir('loadgen-prebuilds-');
    const r = collect(artifacts(Object.fromEntries(ALL.map((p) => [p, header(p)]))), '--out', out);
    expect(r.status, r.stderr).toBe(0);
    for (const p of ALL) expect(existsSync(join(out, p, 'loadgen.napi.node'))).toBe(true);
    expect(r.stdout).toContain('all 5 prebuilds present and of the right kind');
  });

  it('refuses a release with a platform missing, naming it', () => {
    const out = tempDir('loadgen-prebuilds-');
    const r = collect(artifacts(Object.fromEntries(ALL.filter((p) => p !== 'win32-x64').map((p) => [p, header(p)]))), '--out', out);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/1 of 5 platforms not ready:\n {2}win32-x64: missing /);
  });

  it('refuses a binary in the wrong platform folder or no binary at all', () => {
    const out = tempDir('loadgen-prebuilds-');
    const files = Object.fromEntries(ALL.map((p) => [p, header(p)]));
    files['linux-arm64'] = header('linux-x64');
    files['darwin-arm64'] = Buffer.from('not a binary');
    const r = collect(artifacts(files), '--out', out);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('linux-arm64: ');
    expect(r.stderr).toContain('is a linux-x64 binary');
    expect(r.stderr).toMatch(/darwin-arm64: .* is not a shared library/);
  });

  it('checks an existing folder without artifacts, and names a bad option', () => {
    expect(collect('--out', tempDir('loadgen-prebuilds-')).status).toBe(1);
    const bad = collect('--bogus');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('unknown option --bogus');
  });
});
