/**
 * /proc/<pid>/stat (Linux), read where the kernel keeps a process's ids,
 * start time and CPU time.
 */
import { readFileSync } from 'node:fs';

/**
 * The fields after the command name (which may hold spaces and
 * parentheses: read from the last ')'): element 0 is field 3 (the state),
 * so field N is element N - 3. Undefined when the file cannot be read (the
 * process is gone, or this is not Linux).
 */
export function procStatFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}
