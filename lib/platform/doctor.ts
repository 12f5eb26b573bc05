/**
 * What `loadgen doctor` reports: the platform, the native binary in use (a
 * prebuild or a build from source) and what it can do here. Never throws: a
 * binary that does not load is part of the report.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

import { loadedAddonFile, loadNative, packageRoot, type NativePlatformInfo } from '../native/index.js';

/** Where the loaded binary came from. */
export type BinaryKind = 'prebuild' | 'source build' | 'LOADGEN_ADDON_PATH' | 'none';

export interface DoctorReport {
  /** loadgen's version. */
  loadgen: string;
  /** process.platform and process.arch. */
  platform: string;
  arch: string;
  /** 'glibc 2.36', 'musl' or 'n/a' (not Linux). */
  libc: string;
  node: string;
  /** The N-API version Node offers; the addon needs `addonNapi`. */
  napi: number;
  addonNapi: number | null;
  binary: {
    kind: BinaryKind;
    /** Absolute path of the loaded file; null when none loads. */
    path: string | null;
    /** Why no binary loads (kind 'none'). */
    error?: string;
  };
  /** The prebuilt binaries the package holds, by folder (e.g. 'linux-x64/loadgen.napi.node'). */
  prebuilds: string[];
  /** Whether the issue thread can be pinned (issueThreadCpu) and waits use a futex. */
  pinning: boolean;
  futex: boolean;
  /** The addon's own report (bindings/platform_info.cc); null when none loads. */
  addon: NativePlatformInfo | null;
}

/** Loads the addon (if it loads) and reports the platform and the binary. */
export function doctorReport(): DoctorReport {
  let addon: NativePlatformInfo | null = null;
  let addonNapi: number | null = null;
  let error: string | undefined;
  try {
    const native = loadNative();
    addon = native.platformInfo();
    addonNapi = native.napiVersion;
  } catch (cause) {
    error = cause instanceof Error ? cause.message : String(cause);
  }
  const path = addon ? (loadedAddonFile() ?? null) : null;
  return {
    loadgen: packageVersion(),
    platform: process.platform,
    arch: process.arch,
    libc: libcName(),
    node: process.versions.node,
    napi: Number(process.versions.napi),
    addonNapi,
    binary: { kind: path ? binaryKind(path) : 'none', path, ...(error !== undefined ? { error } : {}) },
    prebuilds: listPrebuilds(),
    pinning: addon?.canPin ?? false,
    futex: addon?.futex ?? false,
    addon,
  };
}

/** The report as `loadgen doctor` prints it: one "name: value" line each. */
export function formatDoctorReport(r: DoctorReport): string {
  const yesNo = (b: boolean) => (b ? 'yes' : 'no');
  const lines = [
    `loadgen:   ${r.loadgen}`,
    `platform:  ${r.platform}-${r.arch}, libc ${r.libc}`,
    `node:      ${r.node} (N-API ${r.napi}${r.addonNapi !== null ? `; the addon needs ${r.addonNapi}` : ''})`,
    r.binary.path
      ? `binary:    ${r.binary.path} (${r.binary.kind})`
      : `binary:    none loads`,
  ];
  if (r.addon) {
    const a = r.addon;
    lines.push(
      `built:     ${a.os}-${a.arch}, ${a.compiler}${a.portableLink ? ', static libstdc++, glibc >= 2.28' : ''}`,
      `pinning:   ${yesNo(r.pinning)}${r.pinning ? '' : ' (issueThreadCpu is ignored with a warning)'}`,
      `futex:     ${yesNo(r.futex)} (waits: ${a.waitKind}${a.preciseSleep ? ', precise sleep' : ''})`,
      `cpus:      ${a.hardwareThreads}`,
    );
  }
  lines.push(`prebuilds: ${r.prebuilds.length ? r.prebuilds.join(', ') : 'none in this package'}`);
  if (r.binary.error) lines.push('', r.binary.error);
  return lines.join('\n');
}

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function binaryKind(path: string): BinaryKind {
  if (process.env.LOADGEN_ADDON_PATH && resolve(process.env.LOADGEN_ADDON_PATH) === path) return 'LOADGEN_ADDON_PATH';
  const inPackage = relative(packageRoot, path);
  return inPackage.startsWith(`prebuilds${sep}`) ? 'prebuild' : 'source build';
}

function libcName(): string {
  if (process.platform !== 'linux') return 'n/a';
  const report = process.report?.getReport?.() as { header?: { glibcVersionRuntime?: string } } | undefined;
  const glibc = report?.header?.glibcVersionRuntime;
  if (glibc) return `glibc ${glibc}`;
  return 'musl';
}

function listPrebuilds(): string[] {
  const dir = join(packageRoot, 'prebuilds');
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const platform of readdirSync(dir).sort()) {
    let files: string[];
    try {
      files = readdirSync(join(dir, platform));
    } catch {
      continue;
    }
    for (const file of files.filter((f) => f.endsWith('.node')).sort()) found.push(`${platform}/${file}`);
  }
  return found;
}
