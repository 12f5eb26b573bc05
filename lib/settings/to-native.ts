/**
 * The conversion of resolved settings to the flat object the native core
 * reads (spec/10 §2, spec/60 §2): everything was validated before, once.
 */
import type { NativeMessage, NativeRunConfig } from '../native/index.js';
import { SETTINGS_FIELDS } from './fields.js';
import type { ResolvedLogSettings, ResolvedTestSettings } from '../types/settings.js';

/**
 * The flat object the native core reads: reference snake_case field names
 * (plus `issue_thread_cpu`, `completion_timeout_ms`), `scenario`/`mode` as
 * their integer enum values (spec/10 §1), seeds as bigint.
 */
export function toNativeSettings(s: ResolvedTestSettings): Record<string, number | boolean | bigint | string> {
  const out: Record<string, number | boolean | bigint | string> = {};
  for (const f of SETTINGS_FIELDS) {
    const v = s[f.name];
    out[f.snake] = f.kind === 'enum' ? (f.constraints.values ?? []).indexOf(v as string) : v;
  }
  return out;
}

/** What a run adds to its settings in the native object. */
export interface NativeRunInputs {
  readonly qsl: { readonly name: string; readonly totalSampleCount: number; readonly performanceSampleCount: number };
  readonly sutName: string;
  /** The null-native SUT: every query completes inside the issue thread. */
  readonly completeOnIssueThread: boolean;
  /** What the reference logged before the run (audit.config): the detail log's first lines. */
  readonly preRunMessages: NativeMessage[];
  /** false: no loadgen_report_data.json (startTest's `reportData`). Default true. */
  readonly reportData?: boolean;
}

/** LOADGEN_ISSUE_THREAD_WAIT_MS: shortens the 10 s issue-thread registration wait (tests). */
function issueThreadWaitOverride(): { issue_thread_wait_ms?: number } {
  const raw = process.env['LOADGEN_ISSUE_THREAD_WAIT_MS'];
  if (raw === undefined || !/^\d+$/.test(raw)) return {};
  return { issue_thread_wait_ms: Number(raw) };
}

/** The whole object a run starts with: the settings, the QSL and SUT, and the log output. */
export function toNativeRunConfig(s: ResolvedTestSettings, log: ResolvedLogSettings, run: NativeRunInputs): NativeRunConfig {
  return {
    ...toNativeSettings(s),
    qsl_total_sample_count: run.qsl.totalSampleCount,
    qsl_performance_sample_count: run.qsl.performanceSampleCount,
    sut_name: run.sutName,
    qsl_name: run.qsl.name,
    complete_on_issue_thread: run.completeOnIssueThread,
    host_loads_samples: true,
    log_outdir: log.outdir,
    log_prefix: log.prefix,
    log_suffix: log.suffix,
    log_prefix_with_datetime: log.prefixWithDatetime,
    log_copy_summary_to_stdout: log.copySummaryToStdout,
    log_copy_detail_to_stdout: log.copyDetailToStdout,
    pre_run_messages: run.preRunMessages,
    log_enable_trace: log.enableTrace,
    log_report_data: run.reportData !== false,
    ...issueThreadWaitOverride(),
  };
}
