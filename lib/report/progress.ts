/**
 * Live progress of a run for the CLI: a single updating line on a terminal,
 * plain periodic lines otherwise. Reads only the native core's counters and
 * running histogram (`progress()`), polled from a timer on this thread, so it
 * never blocks the run and never touches per-sample records.
 */
import { MultiBar, Presets, type SingleBar } from 'cli-progress';

import { loadNative, type NativeProgress } from '../native/index.js';

/** Options of {@link startProgress}. */
/**
 * Where progress lines go (default process.stderr): any text stream. Typed
 * structurally so the public declarations need no Node types.
 */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface ProgressOptions {
  /** Where lines go (default process.stderr, so stdout keeps the summary or JSON). */
  stream?: ProgressStream;
  /** Force the live line (true) or plain lines (false); default: the stream's isTTY. */
  tty?: boolean;
  /** Plain mode: ms between lines (default 5000, or LOADGEN_PROGRESS_INTERVAL_MS). */
  plainIntervalMs?: number;
  /** Live mode: no line until the run has lasted this long (default 1000 ms). */
  showAfterMs?: number;
  /** Source of snapshots (tests); default the native addon's progress(). */
  source?: () => NativeProgress | null;
}

/** A running progress display; stop() removes the live line. */
export interface ProgressHandle {
  stop(): void;
}

/** Live-line refresh period: ~10 updates a second. */
const TTY_INTERVAL_MS = 100;
/** Completions over this trailing window give the current QPS. */
const QPS_WINDOW_MS = 2000;

/** Formats ns as a short human duration ("850 ns", "12.3 µs", "4.56 ms", "1.20 s"). */
export function formatDurationNs(ns: number): string {
  if (!Number.isFinite(ns) || ns <= 0) return '0';
  if (ns < 1e3) return `${Math.round(ns)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toPrecision(3)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toPrecision(3)} ms`;
  return `${(ns / 1e9).toFixed(1)} s`;
}

function formatSeconds(ns: number): string {
  return `${(ns / 1e9).toFixed(1)}s`;
}

function formatCount(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(1)}k` : String(n);
}

/** Current QPS from a trailing window of (time, completed samples) points. */
export class QpsWindow {
  private points: Array<{ t: number; completed: number }> = [];
  private series = -1;

  /** Adds a point and returns completions per second over the window (0 until two points). */
  add(series: number, tMs: number, completed: number): number {
    if (series !== this.series) {
      this.series = series;
      this.points = [];
    }
    this.points.push({ t: tMs, completed });
    while (this.points.length > 2 && tMs - this.points[1]!.t >= QPS_WINDOW_MS) this.points.shift();
    const first = this.points[0]!;
    const dt = tMs - first.t;
    return dt > 0 ? ((completed - first.completed) * 1000) / dt : 0;
  }
}

/** The fields of one progress line, already formatted. */
export interface ProgressFields {
  label: string;
  elapsed: string;
  issued: string;
  completed: string;
  qps: string;
  p99: string;
  outstanding: string;
  /** 0..1 for the bar: elapsed/target, or issued/generated when there is no target. */
  fraction: number;
}

/** Formats a snapshot (`qps`: the windowed rate) for display. */
export function progressFields(p: NativeProgress, qps: number): ProgressFields {
  const kind = p.seriesKind === 'accuracy' ? `accuracy ${p.seriesIndex + 1}` : p.scenario;
  const label = p.seriesCount > 1 && p.seriesKind === 'performance' ? `${kind} #${p.seriesIndex + 1}` : kind;
  const target = p.targetDurationNs > 0 ? `/${formatSeconds(p.targetDurationNs)}` : '';
  let fraction = 0;
  if (p.targetDurationNs > 0) fraction = p.elapsedNs / p.targetDurationNs;
  else if (p.generatedQueries > 0) fraction = p.issuedQueries / p.generatedQueries;
  return {
    label: p.phase === 'draining' ? `${label} (draining)` : label,
    elapsed: `${formatSeconds(p.elapsedNs)}${target}`,
    issued: formatCount(p.issuedQueries),
    completed: formatCount(p.completedSamples),
    qps: qps.toFixed(qps >= 100 ? 0 : 1),
    p99: p.latencyCount > 0 ? formatDurationNs(p.p99Ns) : '-',
    outstanding: formatCount(p.outstanding),
    fraction: Math.max(0, Math.min(1, fraction)),
  };
}

/** One plain (non-TTY) progress line. */
export function plainProgressLine(f: ProgressFields): string {
  return (
    `loadgen: ${f.label} ${f.elapsed} issued ${f.issued} queries, completed ${f.completed} samples, ` +
    `${f.qps} samples/s, p99 ${f.p99}, outstanding ${f.outstanding}\n`
  );
}

function defaultPlainInterval(): number {
  const raw = process.env['LOADGEN_PROGRESS_INTERVAL_MS'];
  return raw !== undefined && /^\d+$/.test(raw) && Number(raw) > 0 ? Number(raw) : 5000;
}

/**
 * Starts polling the active run's progress (call it right before startTest;
 * polls before the run starts simply see nothing). The timer is unref'd, so
 * it never keeps the process alive; call stop() when the run settles.
 */
export function startProgress(options: ProgressOptions = {}): ProgressHandle {
  const stream = options.stream ?? process.stderr;
  const tty = options.tty ?? stream.isTTY === true;
  const source = options.source ?? (() => loadNative().progress());
  const started = Date.now();
  const window = new QpsWindow();
  let bars: MultiBar | undefined;
  let bar: SingleBar | undefined;

  const sample = (): ProgressFields | undefined => {
    let p: NativeProgress | null;
    try {
      p = source();
    } catch {
      return undefined;  // the run ended between checks: nothing to show
    }
    if (p === null) return undefined;
    const qps = window.add(p.seriesCount, Date.now(), p.completedSamples);
    return progressFields(p, qps);
  };

  let timer: NodeJS.Timeout;
  if (tty) {
    timer = setInterval(() => {
      const f = sample();
      if (f === undefined) return;
      if (bar === undefined) {
        if (Date.now() - started < (options.showAfterMs ?? 1000)) return;
        // cli-progress draws and clears the line; its own redraw timer ends with stop().
        bars = new MultiBar(
          {
            stream: stream as unknown as NodeJS.WritableStream,
            format:
              '{label} [{bar}] {elapsed} | issued {issued} | done {completed} | {qps}/s | p99 {p99} | outstanding {outstanding}',
            barsize: 16,
            hideCursor: true,
            clearOnComplete: true,
            stopOnComplete: false,
            autopadding: true,
            forceRedraw: true,
            fps: 10,
          },
          Presets.shades_classic,
        );
        bar = bars.create(1, 0, f);
      }
      bar.update(f.fraction, f as unknown as Record<string, unknown>);
    }, TTY_INTERVAL_MS);
  } else {
    // Sampled more often than printed, so the first line already has a rate.
    const interval = options.plainIntervalMs ?? defaultPlainInterval();
    let lastLine = Date.now();
    timer = setInterval(() => {
      const f = sample();
      if (f === undefined || Date.now() - lastLine < interval) return;
      lastLine = Date.now();
      stream.write(plainProgressLine(f));
    }, Math.min(250, interval));
  }
  timer.unref();

  return {
    stop(): void {
      clearInterval(timer);
      if (bars !== undefined) bars.stop();
      bars = undefined;
      bar = undefined;
    },
  };
}
