/**
 * startTest's checks of what the caller hands it: the SUT and QSL objects
 * (before anything touches them) and the dispatch mode's own rules.
 */
import { resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';

import { DEFAULT_AUDIT_CONFIG } from '../config/audit-config.js';
import { InterfaceError, SettingsError } from '../errors.js';
import { hasControlCharacter, show } from '../settings/messages.js';
import type { ResolvedTestSettings } from '../types/settings.js';
import { checkIssueMethods, describe } from '../dispatch/sut-checks.js';
import type { QuerySampleLibrary, SystemUnderTest } from '../types/api.js';
import { isNullNativeSut } from './null-native.js';

export { checkIssueMethods, describe } from '../dispatch/sut-checks.js';

/** options.auditConfig: a non-empty path, or false; by default the reference's file name. */
export function checkAuditConfigOption(option: unknown): string | false {
  const path = option ?? DEFAULT_AUDIT_CONFIG;
  if (path === false) return false;
  if (typeof path !== 'string' || path === '') {
    throw new InterfaceError(`options.auditConfig must be a non-empty path or false, got ${describe(path)}`);
  }
  return path;
}

/** The dispatch mode's own rules; returns the sutModule URL to start workers from. */
export function checkDispatch(sut: SystemUnderTest, s: ResolvedTestSettings, sutModule: unknown): string | undefined {
  if (s.dispatch !== 'wake' && isNullNativeSut(sut))
    throw new InterfaceError(`the null-native SUT completes inside the native core; dispatch '${s.dispatch}' does not apply (use dispatch 'wake')`);
  if (sutModule === undefined) return undefined;
  if (s.dispatch !== 'worker')
    throw new InterfaceError(`options.sutModule starts SUTs in worker threads; it needs dispatch 'worker' (dispatch is '${s.dispatch}')`);
  // A URL, or any object with its string href (the public type needs no DOM/Node URL).
  if (typeof sutModule === 'object' && sutModule !== null && typeof (sutModule as { href?: unknown }).href === 'string') {
    return (sutModule as { href: string }).href;
  }
  if (typeof sutModule !== 'string' || sutModule === '')
    throw new InterfaceError(`options.sutModule must be a module path or URL, got ${describe(sutModule)}`);
  return /^[a-z][a-z0-9+.-]*:/i.test(sutModule) && !/^[a-z]:[\\/]/i.test(sutModule)
    ? sutModule
    : pathToFileURL(resolvePath(process.cwd(), sutModule)).href;
}

/**
 * A name goes into the summary and detail logs as a line's text: a control
 * character (a newline could forge a `Result is : VALID` line above the real
 * verdict) is refused.
 */
function checkName(field: 'sut.name' | 'qsl.name', name: unknown): void {
  if (typeof name !== 'string') throw new InterfaceError(`${field} must be a string, got ${describe(name)}`);
  if (hasControlCharacter(name)) {
    throw new InterfaceError(
      `${field} must be printable text without control characters (no newline, tab, carriage return, ` +
        `other C0/C1 controls, DEL, U+2028 or U+2029), got ${show(name)}`,
    );
  }
}

export function checkSut(sut: SystemUnderTest, needsIssueQuery = true): void {
  if (typeof sut !== 'object' || sut === null) throw new InterfaceError(`sut must be an object, got ${describe(sut)}`);
  checkName('sut.name', sut.name);
  if (needsIssueQuery) checkIssueMethods(sut, 'sut');
  if (sut.flushQueries !== undefined && typeof sut.flushQueries !== 'function')
    throw new InterfaceError(`sut.flushQueries must be a function when present, got ${describe(sut.flushQueries)}`);
  if (sut.report !== undefined && typeof sut.report !== 'function')
    throw new InterfaceError(`sut.report must be a function when present, got ${describe(sut.report)}`);
}

export function checkQsl(qsl: QuerySampleLibrary): void {
  if (typeof qsl !== 'object' || qsl === null) throw new InterfaceError(`qsl must be an object, got ${describe(qsl)}`);
  checkName('qsl.name', qsl.name);
  for (const key of ['loadSamplesToRam', 'unloadSamplesFromRam'] as const) {
    if (typeof qsl[key] !== 'function') throw new InterfaceError(`qsl.${key} must be a function, got ${describe(qsl[key])}`);
  }
  // The samples a performance run loads are part of the data set. The reference
  // silently loads min(performance, total) and logs the larger count; here it
  // is refused. (Types and ranges: resolveQslDependentChecks.)
  const total: unknown = qsl.totalSampleCount;
  const performance: unknown = qsl.performanceSampleCount;
  if (Number.isSafeInteger(total) && Number.isSafeInteger(performance) && (performance as number) > (total as number)) {
    throw new SettingsError('qsl.performanceSampleCount', performance,
      `Invalid QSL qsl.performanceSampleCount = ${String(performance)}: expected an integer in [1, qsl.totalSampleCount = ${String(total)}] ` +
        '(the samples a performance run loads are part of the data set).');
  }
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

