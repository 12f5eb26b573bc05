/**
 * The check that a SUT has a way to take queries, made by startTest and by a
 * dispatch worker on the SUT its module created, and how a wrong value is
 * named in the message.
 */
import { InterfaceError } from '../errors.js';
import { echo } from '../settings/messages.js';
import type { SystemUnderTest } from '../types/api.js';

/**
 * A SUT must have issueQuery or issueQueryIds (a function each when present).
 * `what`: the message when it has neither ('sut': the default message).
 */
export function checkIssueMethods(sut: unknown, what: string): void {
  if (typeof sut !== 'object' || sut === null) throw new InterfaceError(what === 'sut' ? `sut must be an object, got ${describe(sut)}` : what);
  const { issueQuery, issueQueryIds } = sut as Partial<SystemUnderTest>;
  if (issueQueryIds !== undefined && typeof issueQueryIds !== 'function')
    throw new InterfaceError(`sut.issueQueryIds must be a function when present, got ${describe(issueQueryIds)}`);
  if (typeof issueQueryIds === 'function') {
    if (issueQuery !== undefined && typeof issueQuery !== 'function')
      throw new InterfaceError(`sut.issueQuery must be a function when present, got ${describe(issueQuery)}`);
    return;
  }
  if (typeof issueQuery !== 'function') {
    throw new InterfaceError(what === 'sut'
      ? `sut.issueQuery must be a function (or sut.issueQueryIds one), got ${describe(issueQuery)}`
      : what);
  }
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  if (typeof value === 'string') return `'${echo(value)}'`;
  return `${typeof value} ${String(value)}`;
}
