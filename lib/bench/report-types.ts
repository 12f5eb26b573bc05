/**
 * The shape of `loadgen bench`'s report (lib/bench/bench.ts builds it;
 * figures, targets and the text format read it).
 */
import type { NetworkBenchReport } from './net.js';
import type { PeakConfirmation, PeakRun, PeakRunSettings } from './peak.js';
import type { BenchSut, Percentiles } from './trials.js';

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface ServerRow {
  sut: BenchSut;
  targetQps: number;
  valid: boolean;
  latencyNs: Percentiles;
  issueLatenessNs: Percentiles | null;
  deliveryLagNs: Percentiles | null;
  achievedQps: Spread;
  repetitions: number;
  /** Issue thread alone on CPU 1, the rest of the process on CPU 0 (pure-js: the process on CPU 0). */
  pinned: boolean;
  /** The row asked for pinning; `pinned` is false when this machine could not pin. */
  pinRequested: boolean;
  /** The dispatchSpinUs setting the row ran with (0: the default, idle workers sleep). */
  dispatchSpinUs: number;
  /** The wakeLeadUs setting the row ran with (0: the default, woken when a query is published). */
  wakeLeadUs: number;
  /**
   * Pinned rows: the CPU-noise floor on CPU 1 (lateness p99/p99.9 at a
   * random instant), probed right before each repetition (medians): the
   * host's preemptions vary by the minute.
   */
  floorNs?: { p99: number; p999: number };
}

/** A core peak row: FindPeakPerformance's short trials bracket it, runs of the confirming length find and confirm it. */
export interface CorePeakRow {
  sut: BenchSut;
  /** Highest rate confirmed by `confirmRuns` consecutive VALID runs; 0: none within the budget. */
  confirmedQps: number;
  /** Highest rate a single run (of the confirming length) was VALID at: unconfirmed when above confirmedQps. */
  highestValidQps: number;
  /** The first bracket: FindPeakPerformance (pure-js: its own doubling and bisection) with trials of `trialSeconds`. */
  bracket: { peakQps: number; trials: number; trialSeconds: number };
  /** Every run of the confirming length, search and confirmation, in order. */
  runs: PeakRun[];
}

/** How the peak rows were found (lib/bench/peak.ts), and the settings of their runs. */
export interface PeakProcedureReport extends PeakConfirmation {
  /** Runs of the confirming length per row, search and confirmation (the search leaves 2 confirmations' worth). */
  maxRuns: number;
  precision: number;
  stepDown: number;
  /** The core rows' runs: the built-in mlperf.conf's resnet50 Server settings, min_duration set to the confirming length. */
  settings: PeakRunSettings;
}

/** Medians of loadNativeInternals().bench.cpuNoise over the repetitions. */
export interface CpuNoiseFigure {
  /** The CPU probed (-1: the probe thread was not pinned). */
  cpu: number;
  /** The probe thread was pinned to `cpu` in every repetition. */
  pinned: boolean;
  /** The rest of the process ran on CPU 0 (taskset), as in the pinned Server rows. */
  restOnCpu0: boolean;
  durationNs: number;
  gapsPerSecond: number;
  /** Share of the time the probe thread did not run. */
  lostFraction: number;
  gapNs: { p50: number; p99: number; max: number };
  /** Delay an event due at a uniformly random instant sees there: the floor of issue lateness on that CPU. */
  residualNs: { p50: number; p99: number; p999: number };
}

/** One issue-5 target against this run's figures. */
export interface BenchTarget {
  target: string;
  measured: string;
  /** 'n/a': a figure it needs was not measured in this run (e.g. the tiny configuration). */
  holds: 'yes' | 'no' | 'n/a';
}

export interface BenchReport {
  date: string;
  machine: { cpu: string; cpus: number; node: string; platform: string };
  config: { tiny: boolean; repeat: number };
  /** The peak rows (core and network) run once each: the confirmation replaces `repeat` searches. */
  peakProcedure: PeakProcedureReport;
  platform: {
    clockReadNs: number;
    jsToNativeCallNs: number;
    tsfnWakeNs: { p50: number; p99: number };
    cpuNoise: CpuNoiseFigure;
  };
  server: ServerRow[];
  /** The confirmed peaks (0: none confirmed; see serverPeaks for the unconfirmed highest). */
  serverMaxValidQps: Partial<Record<BenchSut, number>>;
  serverPeaks: CorePeakRow[];
  singleStreamQps: Partial<Record<BenchSut, number>>;
  singleStreamP90Ns: Partial<Record<BenchSut, number>>;
  offlineSamplesPerSec: Partial<Record<BenchSut, number>>;
  /** The JS null SUT on the object path (issueQuery(samples)), dispatch wake: it must not get slower than before issueQueryIds. */
  objectPath: { singleStreamQps: number; singleStreamP90Ns: number; offlineSamplesPerSec: number };
  bytesPerSample: number;
  bytesPerSampleByRun: { samples: number; bytesPerSample: number }[];
  /** The network rows (issue 12): lib/bench/net.ts. */
  network: NetworkBenchReport;
  targets: BenchTarget[];
}
