import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { createNullSut, createSyntheticQsl, startTest } from '../lib/index.js';
import { repoRoot, tempDir } from './helpers.js';

describe('the native loader', () => {
  it('explains what it tried and how to build when no binary loads', () => {
    // A copy of the package without build/ or prebuilds/.
    const pkg = tempDir('loadgen-nobinary-');
    cpSync(join(repoRoot, 'dist'), join(pkg, 'dist'), { recursive: true });
    cpSync(join(repoRoot, 'package.json'), join(pkg, 'package.json'));
    symlinkSync(join(repoRoot, 'node_modules'), join(pkg, 'node_modules'), 'dir');
    const script = `import('./dist/native/index.js').then((m) => m.loadNative()).catch((e) => { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })); })`;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: pkg, encoding: 'utf8' });
    const error = JSON.parse(r.stdout) as { name: string; code: string; message: string };
    expect(error.name).toBe('NativeLoadError');
    expect(error.code).toBe('ERR_LOADGEN_NATIVE_LOAD');
    expect(error.message).toContain(`${process.platform}-${process.arch}`);
    expect(error.message).toContain(`N-API ${process.versions.napi}`);
    expect(error.message).toMatch(/libc: /);
    expect(error.message).toContain('prebuilds');
    expect(error.message).toMatch(/CMake.*C\+\+17/);
  });

  // LOADGEN_ADDON_PATH is test-only (scripts/test-sanitized-addon.mjs loads the ASan build with it).
  it.skipIf(process.platform !== 'linux')('loads the file LOADGEN_ADDON_PATH names instead of build/Release', () => {
    const dir = tempDir('loadgen-addon-path-');
    const copy = join(dir, 'copy.node');
    // npm run prebuild (test-pack) moves build/Release's addon into prebuilds/: either serves.
    const release = join(repoRoot, 'build', 'Release', 'loadgen.node');
    const prebuilt = join(repoRoot, 'prebuilds', `${process.platform}-${process.arch}`, 'loadgen.napi.node');
    cpSync(existsSync(release) ? release : prebuilt, copy);
    const script = `import('./dist/native/index.js').then((m) => { m.loadNative(); ` +
      `const maps = require('node:fs').readFileSync('/proc/self/maps', 'utf8'); ` +
      `console.log(JSON.stringify({ copy: maps.includes(process.env.LOADGEN_ADDON_PATH), release: maps.includes('build/Release/loadgen.node') || maps.includes('loadgen.napi.node') })); })`;
    const r = spawnSync(process.execPath, ['-e', script], {
      cwd: repoRoot, encoding: 'utf8', env: { ...process.env, LOADGEN_ADDON_PATH: copy },
    });
    expect(JSON.parse(r.stdout)).toEqual({ copy: true, release: false });
  });

  it('names LOADGEN_ADDON_PATH and its file when that file does not load', () => {
    const missing = join(tempDir('loadgen-addon-path-'), 'missing.node');
    const script = `import('./dist/native/index.js').then((m) => m.loadNative()).catch((e) => { console.log(JSON.stringify({ code: e.code, message: e.message })); })`;
    const r = spawnSync(process.execPath, ['-e', script], {
      cwd: repoRoot, encoding: 'utf8', env: { ...process.env, LOADGEN_ADDON_PATH: missing },
    });
    const error = JSON.parse(r.stdout) as { code: string; message: string };
    expect(error.code).toBe('ERR_LOADGEN_NATIVE_LOAD');
    expect(error.message).toContain(`Tried: ${missing} (LOADGEN_ADDON_PATH).`);
  });
});

describe('issueThreadCpu', () => {
  it.skipIf(process.platform !== 'linux')('pins the issue thread when allowed and warns, without failing, when not', async () => {
    const pinned = await startTest(createNullSut(), createSyntheticQsl(64), {
      scenario: 'Offline', minDurationMs: 0, minQueryCount: 100, issueThreadCpu: 0,
    }, { outdir: tempDir() });
    expect(pinned.valid).toBe(true);
    expect(pinned.errors.warnings).toBe(0);

    // A CPU this machine does not have: the kernel refuses, the run goes on unpinned.
    const refused = await startTest(createNullSut(), createSyntheticQsl(64), {
      scenario: 'Offline', minDurationMs: 0, minQueryCount: 100, issueThreadCpu: 1000,
    }, { outdir: tempDir() });
    expect(refused.valid).toBe(true);
    expect(refused.errors.warnings).toBe(1);
    expect(refused.errors.messages[0]!.text).toMatch(/could not pin the issue thread to CPU 1000/);
    expect(refused.summaryText).toContain('1 warning encountered.');
  });
});
