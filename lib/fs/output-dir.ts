/**
 * Creating an output directory in a way that cannot hang: the path is
 * walked one component at a time, each missing one made with a plain
 * (non-recursive) mkdir, and the walk stops with a clear error at the first
 * component that cannot be made. (Node's `mkdir(path, { recursive: true })`
 * spins at 100 % CPU forever on a path such as `/proc/x`.)
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

import { LogOutputError } from '../errors.js';

function codeOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : '';
}

function reasonOf(error: unknown): string {
  switch (codeOf(error)) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOENT':
      return 'the file system does not allow creating it there (ENOENT)';
    case 'ENOTDIR':
      return 'a component of the path is not a directory';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENAMETOOLONG':
      return 'the name is too long';
    case 'ENOSPC':
      return 'no space left on the device';
    default:
      return (error as Error | undefined)?.message ?? String(error);
  }
}

/** What is at `path`; throws the error that prevents knowing (EACCES...). */
async function kindOf(path: string): Promise<'directory' | 'other' | 'missing'> {
  try {
    return (await stat(path)).isDirectory() ? 'directory' : 'other';
  } catch (error) {
    // ENOTDIR: a component above is not a directory; the walk up names it.
    if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return 'missing';
    throw error;
  }
}

/**
 * Makes sure `outdir` is a directory files can be created in, creating the
 * missing part of the path. Throws {@link LogOutputError} naming `outdir`
 * and the component that failed (not a directory, permission denied, a file
 * system that does not allow it): bad input, raised before any run starts.
 */
export async function ensureOutputDirectory(outdir: string): Promise<void> {
  const fail = (component: string, reason: string, cause?: unknown): LogOutputError =>
    new LogOutputError(
      `cannot create the log directory outdir='${outdir}': ${component === resolve(outdir) ? '' : `'${component}': `}${reason}`,
      cause,
    );
  const target = resolve(outdir);
  // The components that are missing, deepest first, found by walking up to
  // the first one that exists (the root always does).
  const missing: string[] = [];
  let existing = target;
  for (;;) {
    let kind: 'directory' | 'other' | 'missing';
    try {
      kind = await kindOf(existing);
    } catch (error) {
      throw fail(existing, reasonOf(error), error);
    }
    if (kind === 'directory') break;
    if (kind === 'other') throw fail(existing, 'it exists and is not a directory');
    const parent = dirname(existing);
    if (parent === existing) throw fail(existing, 'the root does not exist');
    missing.push(existing);
    existing = parent;
  }
  for (const component of missing.reverse()) {
    try {
      await mkdir(component);
    } catch (error) {
      // Made meanwhile by someone else: fine if it is a directory.
      if (codeOf(error) !== 'EEXIST' || (await kindOf(component).catch(() => 'other')) !== 'directory') {
        throw fail(component, reasonOf(error), error);
      }
    }
  }
  // Files must be creatable there: permission bits do not tell (root passes
  // access() on /proc, where nothing can be created), so try one.
  const probe = join(target, `.loadgen-write-test-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await (await open(probe, 'wx')).close();
  } catch (error) {
    throw new LogOutputError(
      `cannot write log files in outdir='${outdir}': creating a file there failed (${codeOf(error) || reasonOf(error)})`,
      error,
    );
  }
  await rm(probe, { force: true });
}
