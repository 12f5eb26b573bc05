/**
 * Reading config sources (a path or inline text) and collecting their
 * problems: lint errors throw (strict) or become warnings (lenient), as do
 * the reference's own FromConfig messages and return codes.
 */
import { readFileSync } from 'node:fs';

import { ConfigFileError, SettingsError, type ConfigProblem } from '../errors.js';
import type { NativeConfigLoadInput, NativeConfigLoadResult } from '../native/index.js';
import { echo, PATH_ECHO_LIMIT } from '../settings/messages.js';
import type { ConfigRole, ConfigSource } from './types.js';

export interface ReadSource {
  /** Name in messages and provenance. */
  label: string;
  /** The text for the lint; undefined when the file could not be read. */
  text: string | undefined;
  readError?: string;
  /** For the native loader. */
  native: { text: string } | { path: string };
}

export function readSource(source: ConfigSource, defaultName: string): ReadSource {
  if (typeof source === 'string' || 'path' in source) {
    const path = typeof source === 'string' ? source : source.path;
    try {
      return { label: path, text: readFileSync(path, 'utf8'), native: { path } };
    } catch (error) {
      return { label: path, text: undefined, readError: (error as Error).message, native: { path } };
    }
  }
  if (typeof source.text !== 'string') {
    throw new SettingsError(defaultName, source, `Invalid ${defaultName} source: expected a path or { text }.`);
  }
  return { label: source.name ?? defaultName, text: source.text, native: { text: source.text } };
}

export function nativeInput(prefix: 'mlperfConf' | 'userConf' | 'auditConf', s: ReadSource): Partial<NativeConfigLoadInput> {
  return 'path' in s.native
    ? { [`${prefix}Path`]: s.native.path, [`${prefix}Label`]: s.label }
    : { [`${prefix}Text`]: s.native.text, [`${prefix}Label`]: s.label };
}

/** Collects lint problems: errors throw (strict) or become warnings (lenient). */
export class Problems {
  readonly warnings: string[] = [];
  private readonly errors: ConfigProblem[] = [];
  constructor(private readonly lenient: boolean) {}

  add(list: readonly ConfigProblem[]): void {
    for (const p of list) {
      if (p.severity === 'error' && !this.lenient) this.errors.push(p);
      else this.warnings.push(p.message);
    }
  }

  throwIfAny(): void {
    if (this.errors.length > 0) throw new ConfigFileError(this.errors);
  }
}

export function checkReadable(s: ReadSource, role: ConfigRole, problems: Problems): void {
  if (s.text !== undefined) return;
  problems.add([{
    severity: 'error', file: s.label, line: 0, key: role, value: s.label, text: 'cannot read',
    message: `${echo(s.label, PATH_ECHO_LIMIT)}: cannot read the ${role} file: ${echo(s.readError ?? 'unknown error', 2 * PATH_ECHO_LIMIT)}`,
  }]);
}

/** Turns the reference's own FromConfig messages and codes into warnings (lenient) or errors (strict). */
export function reportNative(
  result: NativeConfigLoadResult,
  labels: { mlperf: string; user?: string; audit?: string },
  problems: Problems,
): void {
  const errors = result.messages.filter((m) => m.isError);
  const list: ConfigProblem[] = errors.map((m) => ({
    severity: 'error', file: '', line: 0, key: m.key, value: m.text, text: m.text,
    message: `the reference's FromConfig logs error ${m.key}: ${echo(m.text, 2 * PATH_ECHO_LIMIT)}`,
  }));
  const codes: [string | undefined, number | undefined][] = [
    [labels.mlperf, result.returnCodes.mlperf], [labels.user, result.returnCodes.user], [labels.audit, result.returnCodes.audit],
  ];
  for (const [label, code] of codes) {
    if (label === undefined || code === undefined || code === 0) continue;
    const what = code === -2 ? 'could not be opened' : 'has a line the reference cannot parse';
    list.push({
      severity: 'error', file: label, line: 0, key: 'returnCode', value: code, text: what,
      message: `${echo(label, PATH_ECHO_LIMIT)} ${what}: FromConfig returned ${code} and applied nothing from it.`,
    });
  }
  problems.add(list);
}

