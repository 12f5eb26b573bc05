/**
 * Power sources: Linux powercap (RAPL) energy counters, nvidia-smi's GPU
 * power draw, and any command that prints watts. Each read stamps its own
 * time when the figure is known, in wall-clock ms (the clock of
 * power_begin/power_end) that advance with the monotonic clock: a wall clock
 * stepped during a run (NTP on a VM) moves no reading and skews no RAPL rate.
 */
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { SettingsError } from '../errors.js';
import { echo } from '../settings/messages.js';
import { CommandLoop, shellCommand } from './command-loop.js';

/** The sources `--power` / `PowerOptions.source` take. */
export const POWER_SOURCES = ['rapl', 'nvidia-smi', 'command'] as const;
export type PowerSourceName = (typeof POWER_SOURCES)[number];

/** startTest's `power` option: which source, how often. */
export interface PowerOptions {
  source: PowerSourceName;
  /**
   * 'command': the shell command (`/bin/sh -c`) that prints the current
   * power in watts, one number; run once per reading. 'nvidia-smi': the
   * nvidia-smi executable (default `'nvidia-smi'` on PATH).
   */
  command?: string;
  /** Time between readings, ms: 10 to 1000 (the rules want ≥ 1 reading a second). Default 500. */
  intervalMs?: number;
  /** 'rapl': the powercap folder. Default `/sys/class/powercap`. */
  raplPath?: string;
}

export const DEFAULT_POWER_INTERVAL_MS = 500;
export const MIN_POWER_INTERVAL_MS = 10;
export const MAX_POWER_INTERVAL_MS = 1000;
const DEFAULT_RAPL_PATH = '/sys/class/powercap';
/** Output kept of a failing command, characters. */
const MAX_ECHO = 120;

/** One read: watts (null: a time mark only) at atMs, or why it failed. */
export interface SourceReading {
  atMs: number;
  watts: number | null;
  error?: string;
}

/** A source the sampler reads. */
export interface PowerSource {
  /** How the result names it, e.g. `command: ./watts.sh`. */
  readonly description: string;
  read(timeoutMs: number): Promise<SourceReading>;
  /** Ends what the source started (a command's shell). */
  close(): void;
}

/** Checks the option object; a SettingsError naming the field otherwise. */
export function checkPowerOptions(value: unknown): Required<Pick<PowerOptions, 'source' | 'intervalMs'>> & PowerOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SettingsError('power', value, `power must be an object { source: ${POWER_SOURCES.map((s) => `'${s}'`).join(' | ')}, command?, intervalMs?, raplPath? }`);
  }
  const o = value as Record<string, unknown>;
  if (!POWER_SOURCES.includes(o.source as PowerSourceName)) {
    throw new SettingsError('power.source', o.source, `power.source must be one of ${POWER_SOURCES.join(', ')}, got ${echo(String(o.source))}`);
  }
  const intervalMs = o.intervalMs ?? DEFAULT_POWER_INTERVAL_MS;
  if (typeof intervalMs !== 'number' || !Number.isInteger(intervalMs) || intervalMs < MIN_POWER_INTERVAL_MS || intervalMs > MAX_POWER_INTERVAL_MS) {
    throw new SettingsError('power.intervalMs', intervalMs,
      `power.intervalMs must be an integer from ${MIN_POWER_INTERVAL_MS} to ${MAX_POWER_INTERVAL_MS} (the power rules want at least one reading a second), got ${echo(String(intervalMs))}`);
  }
  if (o.command !== undefined && (typeof o.command !== 'string' || o.command.trim() === '')) {
    throw new SettingsError('power.command', o.command, 'power.command must be a non-empty string');
  }
  if (o.source === 'command' && o.command === undefined) {
    throw new SettingsError('power.command', o.command, "power.source 'command' needs power.command (--power-command CMD): a command that prints watts");
  }
  if (o.raplPath !== undefined && typeof o.raplPath !== 'string') throw new SettingsError('power.raplPath', o.raplPath, 'power.raplPath must be a string');
  return { ...(o as unknown as PowerOptions), intervalMs };
}

/**
 * A clock of wall-clock ms since the epoch that reads Date.now() once, when
 * made, and from then on advances with the monotonic clock (performance.now()).
 */
export function monotonicWallClock(): () => number {
  const wallAtStart = Date.now();
  const monoAtStart = performance.now();
  return () => wallAtStart + (performance.now() - monoAtStart);
}

/** The source an option object names (not yet read); `now` stamps its readings. */
export function createPowerSource(options: PowerOptions, now: () => number = monotonicWallClock()): PowerSource {
  switch (options.source) {
    case 'rapl':
      return new RaplSource(options.raplPath ?? DEFAULT_RAPL_PATH, now);
    case 'nvidia-smi':
      return new NvidiaSmiSource(options.command ?? 'nvidia-smi', now);
    default:
      return new CommandSource(options.command!, now);
  }
}

/** A number of watts as a command prints it, or undefined. */
function parseWatts(text: string): number | undefined {
  const t = text.trim();
  if (!/^[+]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(t)) return undefined;
  const v = Number(t);
  return Number.isFinite(v) ? v : undefined;
}

/** `--power-command CMD`: the command prints one number of watts. */
class CommandSource implements PowerSource {
  readonly description: string;
  private readonly loop: CommandLoop;
  constructor(command: string, private readonly now: () => number) {
    this.description = `command: ${echo(command, MAX_ECHO)}`;
    this.loop = new CommandLoop(command);
  }
  async read(timeoutMs: number): Promise<SourceReading> {
    const out = await this.loop.run(timeoutMs);
    const atMs = this.now();
    if ('error' in out) return { atMs, watts: null, error: `the power command ${out.status === 127 ? `was not found (${out.error})` : out.error}` };
    const watts = parseWatts(out.stdout);
    if (watts === undefined) return { atMs, watts: null, error: `the power command printed '${echo(out.stdout.trim(), MAX_ECHO)}', not a number of watts` };
    return { atMs, watts };
  }
  close(): void {
    this.loop.close();
  }
}

/** nvidia-smi: every GPU's power.draw, summed. */
class NvidiaSmiSource implements PowerSource {
  readonly description = 'nvidia-smi (power.draw, all GPUs)';
  private readonly loop: CommandLoop;
  constructor(executable: string, private readonly now: () => number) {
    this.loop = new CommandLoop(shellCommand(executable, ['--query-gpu=power.draw', '--format=csv,noheader,nounits']));
  }
  async read(timeoutMs: number): Promise<SourceReading> {
    const out = await this.loop.run(timeoutMs);
    const atMs = this.now();
    if ('error' in out) {
      return { atMs, watts: null, error: out.status === 127 ? 'nvidia-smi not found on PATH (no NVIDIA driver on this machine)' : `nvidia-smi ${out.error}` };
    }
    const fields = out.stdout.split(/\s+/).filter((l) => l !== '');
    const values = fields.map(parseWatts);
    if (fields.length === 0 || values.some((v) => v === undefined)) {
      return { atMs, watts: null, error: `nvidia-smi printed '${echo(out.stdout.trim(), MAX_ECHO)}', not power draws in watts` };
    }
    return { atMs, watts: values.reduce((a, b) => a! + b!, 0)! };
  }
  close(): void {
    this.loop.close();
  }
}

/** One RAPL package domain: its energy counter and where it wraps. */
interface RaplDomain {
  energyFile: string;
  maxRangeUj: number;
}

/**
 * Linux powercap RAPL: the packages' energy counters (intel-rapl:N; their
 * intel-rapl:N:M subzones are parts of the package and would count twice).
 * A reading is the counters' increase since the previous one over the time
 * between them; the first is a time mark.
 */
class RaplSource implements PowerSource {
  readonly description: string;
  private domains: RaplDomain[] | undefined;
  private previous: { atMs: number; uj: number[] } | undefined;
  constructor(private readonly root: string, private readonly now: () => number) {
    this.description = `rapl (${root})`;
  }
  private open(): RaplDomain[] {
    if (this.domains !== undefined) return this.domains;
    const names = existsSync(this.root) ? readdirSync(this.root).filter((n) => /^intel-rapl:\d+$/.test(n)).sort() : [];
    if (names.length === 0) throw new Error(`no RAPL domains (${this.root}/intel-rapl:N): this machine or kernel exposes no powercap energy counters`);
    this.domains = names.map((n) => {
      const energyFile = join(this.root, n, 'energy_uj');
      try {
        accessSync(energyFile, constants.R_OK);
        readFileSync(energyFile, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EACCES') {
          throw new Error(`${energyFile} is not readable by this user (Linux restricts RAPL counters to root): run as root, or make it readable (sudo chmod a+r ${join(this.root, 'intel-rapl:*', 'energy_uj')})`);
        }
        throw new Error(`cannot read ${energyFile}: ${(error as Error).message}`);
      }
      const maxRangeUj = Number(readFileSync(join(this.root, n, 'max_energy_range_uj'), 'utf8').trim());
      return { energyFile, maxRangeUj: Number.isFinite(maxRangeUj) && maxRangeUj > 0 ? maxRangeUj : 2 ** 32 };
    });
    return this.domains;
  }
  close(): void {
    // Nothing held open: each reading opens and reads the counter files.
  }
  read(): Promise<SourceReading> {
    let atMs = this.now();
    try {
      const domains = this.open();
      const uj = domains.map((d) => Number(readFileSync(d.energyFile, 'utf8').trim()));
      atMs = this.now();
      if (uj.some((v) => !Number.isFinite(v))) return Promise.resolve({ atMs, watts: null, error: 'a RAPL energy_uj counter did not hold a number' });
      const previous = this.previous;
      this.previous = { atMs, uj };
      if (previous === undefined || atMs <= previous.atMs) return Promise.resolve({ atMs, watts: null });
      let deltaUj = 0;
      domains.forEach((d, i) => {
        const before = previous.uj[i]!;
        // The counter wraps to 0 past max_energy_range_uj.
        deltaUj += uj[i]! >= before ? uj[i]! - before : d.maxRangeUj - before + uj[i]!;
      });
      return Promise.resolve({ atMs, watts: deltaUj / 1e6 / ((atMs - previous.atMs) / 1000) });
    } catch (error) {
      return Promise.resolve({ atMs, watts: null, error: (error as Error).message });
    }
  }
}
