/**
 * Runs a power command once per reading without spawning a process from
 * this one each time: spawning from Node blocks the calling thread for
 * milliseconds (measured here: 4.7 ms p50, 16 ms p90 on the 2-vCPU VM), which
 * would land on the SUT's JS thread. One `/bin/sh` loop is started before
 * the run; each reading writes a line to its stdin, the shell runs the
 * command (its fork, not ours) and answers with one line:
 * `ok <stdout, lines joined by spaces>` or `fail <status> <stderr>`.
 */
import { spawn, type ChildProcess } from 'node:child_process';

import { echo } from '../settings/messages.js';

/** Stderr kept of a failing command, bytes. */
const MAX_STDERR = 200;
/** A reply line longer than this is cut (a command printing megabytes is not a power meter). */
const MAX_LINE = 64 * 1024;

const LOOP = `err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
while IFS= read -r _; do
  out=$(eval "$LOADGEN_POWER_COMMAND" 2>"$err" </dev/null); rc=$?
  if [ $rc -eq 0 ]; then printf 'ok %s\\n' "$(printf '%s' "$out" | tr '\\n' ' ')"
  else printf 'fail %s %s\\n' "$rc" "$(head -c ${MAX_STDERR} "$err" | tr '\\n' ' ')"; fi
done`;

/** What one run of the command gave: its stdout (lines joined by spaces) or why it failed. */
export type CommandOutcome = { stdout: string } | { error: string; status?: number };

export class CommandLoop {
  private child: ChildProcess | undefined;
  private buffer = '';
  private pending: { resolve: (o: CommandOutcome) => void; timer: ReturnType<typeof setTimeout> } | undefined;

  /** `command`: shell text, run with `eval` (as `/bin/sh -c` would). */
  constructor(private readonly command: string) {}

  /** Runs the command once; never rejects. One run at a time. */
  run(timeoutMs: number): Promise<CommandOutcome> {
    if (this.pending !== undefined) return Promise.resolve({ error: 'a reading is still running' });
    const child = this.child ?? this.start();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        this.kill();  // the next run starts a fresh shell
        resolve({ error: `gave no answer within ${timeoutMs} ms` });
      }, timeoutMs);
      this.pending = { resolve, timer };
      child.stdin!.write('\n');
    });
  }

  /** Ends the shell and whatever it runs. */
  close(): void {
    this.kill();
  }

  private start(): ChildProcess {
    // Its own process group, so a hanging command dies with the shell.
    const child = spawn('/bin/sh', ['-c', LOOP], {
      detached: true,
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { ...process.env, LOADGEN_POWER_COMMAND: this.command },
    });
    this.child = child;
    this.buffer = '';
    child.stdin!.on('error', () => undefined);  // a shell that died: reported by 'exit'
    child.stdout!.setEncoding('utf8').on('data', (data: string) => {
      if (this.child !== child) return;
      this.buffer += data;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        this.answer(parseReply(line));
      }
      if (this.buffer.length > MAX_LINE) this.buffer = this.buffer.slice(0, MAX_LINE);
    });
    child.on('error', (error) => this.stopped(child, `the shell could not start: ${error.message}`));
    child.on('exit', () => this.stopped(child, 'its shell ended'));
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    return child;
  }

  private answer(outcome: CommandOutcome): void {
    const pending = this.pending;
    if (pending === undefined) return;
    this.pending = undefined;
    clearTimeout(pending.timer);
    pending.resolve(outcome);
  }

  private stopped(child: ChildProcess, why: string): void {
    if (this.child !== child) return;
    this.child = undefined;
    this.answer({ error: why });
  }

  private kill(): void {
    const child = this.child;
    this.child = undefined;
    if (child === undefined) return;
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }
}

function parseReply(line: string): CommandOutcome {
  if (line.startsWith('ok ')) return { stdout: line.slice(3) };
  const m = /^fail (\d+) ?(.*)$/.exec(line);
  if (m === null) return { error: `gave an unreadable answer '${echo(line, 120)}'` };
  const status = Number(m[1]);
  const said = m[2]!.trim();
  return { error: `exited with ${status}${said !== '' ? `: ${echo(said, 120)}` : ''}`, status };
}

/** A program and its arguments as shell text (each argument single-quoted). */
export function shellCommand(file: string, args: readonly string[]): string {
  return [file, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
}
