/**
 * Reads a power source on a timer of the JS thread (never the issue thread)
 * from just before a run until just after it: the first reading is taken
 * before the run starts, one more once it has ended, so the readings cover
 * the whole power window. Reads never overlap: a slow source delays the next.
 */
import { SettingsError } from '../errors.js';
import type { PowerReading } from './energy.js';
import { createPowerSource, monotonicWallClock, type PowerOptions, type PowerSource } from './sources.js';

/** Readings kept at most (a 10-minute run at 10 ms is 60 000). */
const MAX_READINGS = 1_000_000;
/** A read that takes longer fails as "no answer" (at least this long, ms). */
const MIN_READ_TIMEOUT_MS = 2000;

export class PowerSampler {
  readonly readings: PowerReading[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private reading: Promise<void> | undefined;
  private stopped = false;
  private nextDueMs = 0;
  private readonly timeoutMs: number;

  private constructor(
    private readonly source: PowerSource,
    readonly intervalMs: number,
    /** The clock the source stamps readings with (wall-clock ms, advancing monotonically). */
    private readonly now: () => number,
  ) {
    this.timeoutMs = Math.max(MIN_READ_TIMEOUT_MS, 2 * intervalMs);
  }

  get description(): string {
    return this.source.description;
  }

  /**
   * Takes the first reading and starts the timer. A source that cannot be
   * read is a SettingsError (`power`) naming why, before anything runs.
   */
  static async start(options: PowerOptions & { intervalMs: number }): Promise<PowerSampler> {
    const now = monotonicWallClock();
    const sampler = new PowerSampler(createPowerSource(options, now), options.intervalMs, now);
    const first = await sampler.source.read(sampler.timeoutMs);
    if (first.error !== undefined) {
      sampler.source.close();
      throw new SettingsError('power', options.source, `--power ${options.source}: no power readings here: ${first.error}`);
    }
    sampler.readings.push(first);
    sampler.nextDueMs = first.atMs + sampler.intervalMs;
    sampler.schedule();
    return sampler;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.reading = this.readOnce().then(() => {
        this.reading = undefined;
        // Due times stay on the interval's grid; a read that overran skips to the next slot.
        const now = this.now();
        this.nextDueMs += this.intervalMs;
        if (this.nextDueMs < now) this.nextDueMs = now;
        this.schedule();
      });
    }, Math.max(0, this.nextDueMs - this.now()));
    this.timer.unref?.();
  }

  private async readOnce(): Promise<void> {
    const reading = await this.source.read(this.timeoutMs);
    if (this.readings.length < MAX_READINGS) this.readings.push(reading);
  }

  /** Stops the timer and takes the last reading (after the run's end); resolves with every reading. */
  async stop(): Promise<PowerReading[]> {
    if (this.stopped) return this.readings;
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.reading;
    await this.readOnce();
    this.source.close();
    return this.readings;
  }
}
