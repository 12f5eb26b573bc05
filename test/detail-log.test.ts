import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { querySamplesComplete, startTest, type QuerySample, type Scenario, type SystemUnderTest } from '../lib/index.js';
import { fromSnakeCaseSettings } from '../lib/settings/assignments.js';
import { goldenDir, hasGolden, recordingQsl, tempDir } from './helpers.js';

interface MlLogLine {
  key: string;
  value: unknown;
  time_ms: number;
  namespace: string;
  event_type: string;
  metadata: { is_error: boolean; is_warning: boolean; file: string; line_no: number; pid: number; tid: number };
}

/** Parses a detail log strictly: every line is ":::MLLOG " + one JSON object. */
function parseDetail(text: string): MlLogLine[] {
  const lines = text.split('\n');
  expect(lines.pop()).toBe('');
  return lines.map((line) => {
    expect(line.startsWith(':::MLLOG ')).toBe(true);
    return JSON.parse(line.slice(':::MLLOG '.length)) as MlLogLine;
  });
}

// Entries whose presence depends on the reference logger's timing (spec/60 §3.31).
const timingDependent = (l: MlLogLine) =>
  l.key === 'warning_generic_message' && /^(CAS failed\.|Logging allocation detected)/.test(String(l.value));

function keySequence(entries: MlLogLine[]): string[] {
  return entries.filter((l) => !timingDependent(l)).map((l) => l.key);
}

function payloadSut(): SystemUnderTest {
  return {
    name: 'GoldenNullSUT',
    issueQuery(samples: QuerySample[]) {
      querySamplesComplete(
        samples.map((s) => {
          const data = new Uint8Array(4);
          new DataView(data.buffer).setUint32(0, s.index, true);
          return { id: s.id, data };
        }),
      );
    },
  };
}

const cases: [Scenario, 'performance' | 'accuracy'][] = (['SingleStream', 'MultiStream', 'Server', 'Offline'] as const).flatMap(
  (s) => [[s, 'performance'], [s, 'accuracy']] as [Scenario, 'performance' | 'accuracy'][],
);

describe.skipIf(!hasGolden)('the detail log against the golden example logs', () => {
  it.each(cases)('%s %s: same keys in the same order, same value types, valid JSON lines', async (scenario, kind) => {
    const dir = join(goldenDir, 'logs', scenario, kind);
    const run = JSON.parse(readFileSync(join(dir, 'run_settings.json'), 'utf8')) as {
      settings: Record<string, unknown>;
      qsl: { total_sample_count: number; performance_sample_count: number };
    };
    // Values that depend on this machine's speed are adjusted; the key sequence does not change:
    // an instant SUT outruns what a duration-sized SingleStream/MultiStream run generates
    // (it would log "ran out"), and a loaded machine can miss the golden Server bound.
    const settings = {
      ...fromSnakeCaseSettings(run.settings),
      ...(kind === 'performance' && (scenario === 'SingleStream' || scenario === 'MultiStream')
        ? { minDurationMs: 1, minQueryCount: 20000 }
        : {}),
      ...(scenario === 'Server' ? { serverTargetLatencyNs: 200_000_000 } : {}),
    };
    const qsl = { ...recordingQsl(run.qsl.total_sample_count, run.qsl.performance_sample_count), name: 'GoldenQSL' };
    const outdir = tempDir();
    const result = await startTest(payloadSut(), qsl, settings, { outdir });
    if (kind === 'performance') expect(result.validity).toBe('VALID');

    const ours = parseDetail(readFileSync(result.files.detail!, 'utf8'));
    const golden = parseDetail(readFileSync(join(dir, 'mlperf_log_detail.txt'), 'utf8'));
    expect(keySequence(ours)).toEqual(keySequence(golden));

    const goldenTypes = new Map<string, string>();
    for (const l of golden) goldenTypes.set(l.key, Array.isArray(l.value) ? 'array' : typeof l.value);
    for (const l of ours) {
      expect(Array.isArray(l.value) ? 'array' : typeof l.value, l.key).toBe(goldenTypes.get(l.key));
      expect(l.namespace).toBe('mlperf::logging');
      expect(l.event_type).toBe('POINT_IN_TIME');
      expect(l.metadata.is_error).toBe(l.key.startsWith('error_'));
      expect(l.metadata.is_warning).toBe(l.key.startsWith('warning_'));
    }
    // time_ms never goes backwards.
    for (let i = 1; i < ours.length; i++) expect(ours[i]!.time_ms).toBeGreaterThanOrEqual(ours[i - 1]!.time_ms);
    // MLCommons' parsers read the first occurrence of a key.
    const first = (key: string) => ours.find((l) => l.key === key)?.value;
    expect(first('effective_scenario')).toBe(scenario);
    expect(first('sut_name')).toBe('GoldenNullSUT');
    expect(String(first('power_begin'))).toMatch(/^\d\d-\d\d-\d{4} \d\d:\d\d:\d\d\.\d{3}$/);
    if (kind === 'performance') {
      expect(first('result_validity')).toBe('VALID');
      expect(first('num_errors')).toBe(0);
    }
    expect(first('loadgen_version')).toMatch(/^\d+\.\d+\.\d+ @ (NA|[0-9a-f]+)$/);
  });
});
