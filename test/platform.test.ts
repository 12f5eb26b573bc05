/**
 * Issue 15: the Linux addon's glibc baseline (objdump -T), `loadgen doctor`
 * and the install step's one line.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { doctorReport, formatDoctorReport } from '../lib/index.js';
import { loadNative } from '../lib/native/index.js';
import { repoRoot, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');
const releaseAddon = join(repoRoot, 'build', 'Release', 'loadgen.node');
const hasObjdump = spawnSync('objdump', ['--version']).status === 0;

/** The highest symbol version of `prefix` (e.g. GLIBC) that `file` needs, as [major, minor, patch]. */
function maxVersionNeeded(file: string, prefix: string): { version: number[]; symbols: string[] } {
  const r = spawnSync('objdump', ['-T', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  expect(r.status, r.stderr).toBe(0);
  let max = [0];
  const symbols: string[] = [];
  for (const m of r.stdout.matchAll(new RegExp(`\\*UND\\*\\s+\\S+\\s+\\(?${prefix}_([0-9.]+)\\)?\\s+(\\S+)`, 'g'))) {
    const version = m[1]!.split('.').map(Number);
    symbols.push(`${m[2]}@${prefix}_${m[1]}`);
    if (compareVersions(version, max) > 0) max = version;
  }
  return { version: max, symbols };
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const linuxX64Files = [releaseAddon, join(repoRoot, 'prebuilds', 'linux-x64', 'loadgen.napi.node')].filter(existsSync);

describe.skipIf(process.platform !== 'linux' || process.arch !== 'x64' || !hasObjdump)(
  'the linux-x64 addon loads on glibc >= 2.28 (needs objdump: binutils)',
  () => {
    it.each(linuxX64Files.map((f) => [f.slice(repoRoot.length + 1), f]))('%s needs no GLIBC_ version above 2.28', (_name, file) => {
      const { version, symbols } = maxVersionNeeded(file, 'GLIBC');
      const newer = symbols.filter((s) => compareVersions(s.split('GLIBC_')[1]!.split('.').map(Number), [2, 28]) > 0);
      expect(newer, `symbols newer than glibc 2.28 in ${file}`).toEqual([]);
      expect(compareVersions(version, [2, 28])).toBeLessThanOrEqual(0);
    });

    it.each(linuxX64Files.map((f) => [f.slice(repoRoot.length + 1), f]))(
      '%s needs no libstdc++ and exports none of its symbols',
      (_name, file) => {
        const dynamic = spawnSync('objdump', ['-p', file], { encoding: 'utf8' }).stdout;
        expect(dynamic).not.toMatch(/NEEDED\s+libstdc\+\+/);
        expect(dynamic).not.toMatch(/NEEDED\s+libgcc_s/);
        expect(maxVersionNeeded(file, 'GLIBCXX').symbols).toEqual([]);
        const exported = spawnSync('objdump', ['-T', file], { encoding: 'utf8', maxBuffer: 64 << 20 }).stdout
          .split('\n')
          .filter((l) => /\sg\s/.test(l) && !/\*UND\*/.test(l))
          .map((l) => l.trim().split(/\s+/).pop()!);
        expect(exported.filter((s) => /^(_ZNSt|_ZSt|_ZNKSt|__cxa_|__gxx_|_Unwind_|__wrap_)/.test(s))).toEqual([]);
        expect(exported).toContain('napi_register_module_v1');
      },
    );
  },
);

describe('platformInfo (the addon)', () => {
  it('reports the build and the OS facilities it uses', () => {
    const info = loadNative().platformInfo();
    expect(info.os).toBe(process.platform === 'linux' || process.platform === 'darwin' || process.platform === 'win32' ? process.platform : 'other');
    expect(info.arch).toBe(process.arch === 'x64' || process.arch === 'arm64' ? process.arch : 'other');
    expect(info.hardwareThreads).toBeGreaterThan(0);
    if (process.platform === 'linux') {
      expect(info).toMatchObject({ waitKind: 'futex', futex: true, canPin: true, knowsCurrentCpu: true, preciseSleep: true });
      expect(info.currentCpu).toBeGreaterThanOrEqual(0);
      // The sanitizer build (LOADGEN_ADDON_PATH) keeps the default link.
      if (!process.env.LOADGEN_ADDON_PATH) expect(info.portableLink).toBe(true);
    }
  });
});

describe('loadgen doctor', () => {
  it('prints the platform, libc, Node and N-API, the binary and what it supports', () => {
    const r = spawnSync(process.execPath, [cli, 'doctor'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`platform:  ${process.platform}-${process.arch}, libc `);
    expect(r.stdout).toContain(`node:      ${process.versions.node} (N-API ${process.versions.napi}; the addon needs 8)`);
    expect(r.stdout).toMatch(/^binary: {4}\S+loadgen(\.napi)?\.node \((prebuild|source build)\)$/m);
    expect(r.stdout).toMatch(/^pinning: {3}(yes|no)/m);
    expect(r.stdout).toMatch(/^futex: {5}(yes|no) \(waits: /m);
    if (process.platform === 'linux') {
      expect(r.stdout).toMatch(/libc glibc \d+\.\d+|libc musl/);
      expect(r.stdout).toMatch(/^futex: {5}yes \(waits: futex, precise sleep\)$/m);
    }
  });

  it('--json: one document with the same facts', () => {
    const r = spawnSync(process.execPath, [cli, 'doctor', '--json'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as ReturnType<typeof doctorReport>;
    expect(report).toMatchObject({
      platform: process.platform,
      arch: process.arch,
      node: process.versions.node,
      napi: Number(process.versions.napi),
      addonNapi: 8,
    });
    expect(report.binary.path).toEqual(existsSync(releaseAddon) ? releaseAddon : expect.stringContaining('prebuilds'));
    expect(report.binary.kind).toBe(existsSync(releaseAddon) ? 'source build' : 'prebuild');
    expect(report.addon?.waitKind).toBeTypeOf('string');
    expect(report.futex).toBe(report.addon?.futex);
  });

  it.skipIf(!existsSync(releaseAddon))('names the file LOADGEN_ADDON_PATH loads', () => {
    const copy = join(tempDir('loadgen-doctor-'), 'copy.node');
    cpSync(releaseAddon, copy);
    const r = spawnSync(process.execPath, [cli, 'doctor', '--json'], {
      cwd: repoRoot, encoding: 'utf8', timeout: 60_000, env: { ...process.env, LOADGEN_ADDON_PATH: copy },
    });
    expect(r.status, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { binary: unknown }).binary).toEqual({ kind: 'LOADGEN_ADDON_PATH', path: copy });
  });

  it('says so, and why, and exits 3 when no binary loads', () => {
    const pkg = packageCopy();
    const r = spawnSync(process.execPath, [join(pkg, 'dist', 'cli.js'), 'doctor'], { cwd: pkg, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(3);
    expect(r.stdout).toContain('binary:    none loads');
    expect(r.stdout).toContain('prebuilds: none in this package');
    expect(r.stdout).toContain('could not load the native addon');
  });

  it('doctorReport() and formatDoctorReport() are the public form', () => {
    const report = doctorReport();
    expect(report.binary.path).not.toBeNull();
    expect(formatDoctorReport(report).split('\n')[0]).toBe(`loadgen:   ${report.loadgen}`);
  });
});

/** A copy of the package (dist, package.json, install script) without build/ or prebuilds/. */
function packageCopy(): string {
  const pkg = tempDir('loadgen-pkg-');
  cpSync(join(repoRoot, 'dist'), join(pkg, 'dist'), { recursive: true });
  cpSync(join(repoRoot, 'package.json'), join(pkg, 'package.json'));
  mkdirSync(join(pkg, 'scripts'));
  cpSync(join(repoRoot, 'scripts', 'install.mjs'), join(pkg, 'scripts', 'install.mjs'));
  symlinkSync(join(repoRoot, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  return pkg;
}

describe('the install step says what it did in one line', () => {
  function install(pkg: string) {
    const env = { ...process.env };
    delete env.npm_config_build_from_source;
    return spawnSync(process.execPath, [join(pkg, 'scripts', 'install.mjs')], { cwd: pkg, encoding: 'utf8', env, timeout: 60_000 });
  }
  // The source build itself is not under test here: a stand-in records that it ran.
  function stubBuild(pkg: string): void {
    writeFileSync(join(pkg, 'scripts', 'build-native.mjs'), "console.error('stub build: ' + process.env.LOADGEN_BUILD_REASON);\n");
  }

  it.skipIf(!existsSync(releaseAddon))('names the prebuilt binary it loaded', () => {
    const pkg = packageCopy();
    const dir = join(pkg, 'prebuilds', `${process.platform}-${process.arch}`);
    mkdirSync(dir, { recursive: true });
    cpSync(releaseAddon, join(dir, 'loadgen.napi.node'));
    const r = install(pkg);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^loadgen: using the prebuilt binary prebuilds/${process.platform}-${process.arch}/loadgen\\.napi\\.node \\(${process.platform}-${process.arch}(, (glibc [0-9.]+|musl))?\\); nothing to build\\.$`),
    );
  });

  it('says why it builds from source when there is no prebuild for this platform', () => {
    const pkg = packageCopy();
    stubBuild(pkg);
    const r = install(pkg);
    expect(r.status, r.stderr).toBe(0);
    const [line, stub] = r.stderr.trim().split('\n');
    expect(line).toMatch(new RegExp(`^loadgen: this package has no prebuilt binary for ${process.platform}-${process.arch}.*; building the native addon from source\\.$`));
    expect(stub).toMatch(/^stub build: this package has no prebuilt binary/);
  });

  it('says why it builds from source when the prebuild does not load here', () => {
    const pkg = packageCopy();
    stubBuild(pkg);
    const dir = join(pkg, 'prebuilds', `${process.platform}-${process.arch}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'loadgen.napi.node'), 'not a shared library');
    const r = install(pkg);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.split('\n')[0]).toMatch(
      new RegExp(`^loadgen: prebuilds/${process.platform}-${process.arch}/loadgen\\.napi\\.node does not load here \\(.+\\); building the native addon from source\\.$`),
    );
  });
});
