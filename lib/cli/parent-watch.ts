/**
 * A command started through npm (`npx loadgen serve`, `npm exec`, `npm run`)
 * ends when that npm process does. npm 11.19's `npm exec` runs the command
 * under `sh -c` and does not pass a SIGTERM on: `kill <npx's pid>` in a
 * script ended npm and its sh and left `loadgen serve` running, reparented,
 * holding its port. So the server finds the npm process among its
 * ancestors when it starts and polls it and its own parent: once either is
 * gone (npm's pid gone or taken by a newer process; process.ppid changed,
 * as it does when the parent exits), the server closes as on SIGTERM. The
 * parent goes first: on SIGTERM npm ends its `sh -c` at once, and exits
 * itself ~1.5 s later.
 *
 * Linux: ancestors and start times from /proc/<pid>/stat, command lines from
 * /proc/<pid>/cmdline. Elsewhere (no /proc): the parent process alone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

import { procStatFields } from '../platform/proc-stat.js';

/** How often the npm process is looked at. */
export const PARENT_POLL_MS = 250;
/** Ancestors looked through for npm. */
const MAX_DEPTH = 16;

/** A watched process: its pid and what it is, for the message. */
export interface ParentWatch {
  readonly pid: number;
  readonly what: string;
  stop(): void;
}

interface ProcStat {
  ppid: number;
  startTime: string;
}

/** The parent and start time from /proc/<pid>/stat. */
function procStat(pid: number): ProcStat | undefined {
  const fields = procStatFields(pid);
  // Field 4 is the ppid, field 22 the start time (clock ticks since boot).
  return fields === undefined ? undefined : { ppid: Number(fields[1]), startTime: fields[19] ?? '' };
}

function procArgs(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
  } catch {
    return [];
  }
}

/**
 * Whether a command line is npm's: node running npm-cli.js / npx-cli.js, an
 * `npm`/`npx` executable, or npm's own process title, which replaces its
 * arguments with one string ('npm exec loadgen serve …').
 */
export function isNpmCommandLine(args: readonly string[], npmExecPath: string | undefined): boolean {
  return args.slice(0, 2).some((arg) =>
    (npmExecPath !== undefined && npmExecPath !== '' && arg === npmExecPath) ||
    /(?:^|[/\\])np[mx]-cli\.js$/.test(arg) ||
    ['npm', 'npx'].includes(basename(arg.split(' ')[0]!)));
}

/**
 * When this process runs under npm (npm sets npm_execpath for what it
 * runs), watches the nearest npm ancestor and this process's parent, and
 * calls `onGone` once either has exited. Undefined when not under npm.
 */
export function watchNpmAncestor(onGone: (watch: ParentWatch) => void, env: NodeJS.ProcessEnv = process.env): ParentWatch | undefined {
  const npmExecPath = env['npm_execpath'];
  if (npmExecPath === undefined || npmExecPath === '') return undefined;
  const parent = process.ppid;
  const parentAlive = (): boolean => process.ppid === parent;
  const parentWhat = `its parent process (pid ${parent})`;
  if (!existsSync('/proc/self/stat')) return poll(parent, parentWhat, () => (parentAlive() ? undefined : parentWhat), onGone);
  let pid = parent;
  for (let depth = 0; depth < MAX_DEPTH && pid > 1; depth++) {
    const stat = procStat(pid);
    if (stat === undefined) break;
    if (isNpmCommandLine(procArgs(pid), npmExecPath)) {
      const npm = pid;
      const npmWhat = `npm (pid ${npm}), which started it,`;
      return poll(npm, npmWhat, () => (procStat(npm)?.startTime !== stat.startTime ? npmWhat : parentAlive() ? undefined : parentWhat), onGone);
    }
    pid = stat.ppid;
  }
  return poll(parent, parentWhat, () => (parentAlive() ? undefined : parentWhat), onGone);
}

/** Calls `onGone` with what is gone once `gone()` names something (then stops). */
function poll(pid: number, what: string, gone: () => string | undefined, onGone: (watch: ParentWatch) => void): ParentWatch {
  const timer = setInterval(() => {
    const which = gone();
    if (which === undefined) return;
    clearInterval(timer);
    onGone({ pid, what: which, stop: () => {} });
  }, PARENT_POLL_MS);
  // The watch alone never keeps the process alive.
  timer.unref();
  return { pid, what, stop: () => clearInterval(timer) };
}
