import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { querySamplesComplete, startTest, type QuerySample, type Scenario, type TestSettingsInput } from '../lib/index.js';
import { recordingQsl, tempDir } from './helpers.js';

// What MLCommons' tools read from our logs (spec/50 §7), checked the way they read it.

const settings: Record<Scenario, TestSettingsInput> = {
  // The query count sizes the SingleStream/MultiStream runs: with the
  // completion call handing the next query over, an instant SUT outruns what
  // a duration generates (see test/scenarios.test.ts).
  SingleStream: { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 1000, minDurationMs: 10, minQueryCount: 100_000 },
  MultiStream: { scenario: 'MultiStream', multiStreamExpectedLatencyNs: 2000, minDurationMs: 10, minQueryCount: 50_000 },
  Server: { scenario: 'Server', serverTargetQps: 2000, minDurationMs: 500, accuracyLogSamplingTarget: 16, accuracyLogRngSeed: 720381539243781796n },
  Offline: { scenario: 'Offline', offlineExpectedQps: 1_000_000, minDurationMs: 0, minQueryCount: 24576 },
};

const metricKey: Record<Scenario, string> = {
  SingleStream: 'early_stopping_latency_ss',
  MultiStream: 'early_stopping_latency_ms',
  Server: 'result_completed_samples_per_sec',
  Offline: 'result_samples_per_second',
};

const sut = {
  name: 'compat',
  issueQuery(samples: QuerySample[]) {
    querySamplesComplete(samples.map((s) => ({ id: s.id, data: Uint8Array.of(s.index & 0xff, s.index >> 8, 0, 0) })));
  },
};

/** MLPerfLog: first line starts with the marker, every marked line is strict JSON, first occurrence wins. */
function mlperfLog(text: string): Map<string, unknown> {
  const lines = text.split('\n').filter((l) => l.length > 0);
  expect(lines[0]!.startsWith(':::MLLOG')).toBe(true);
  const first = new Map<string, unknown>();
  for (const line of lines) {
    if (!line.startsWith(':::MLLOG')) continue;
    const entry = JSON.parse(line.slice(':::MLLOG'.length)) as { key: string; value: unknown };
    if (!first.has(entry.key)) first.set(entry.key, entry.value);
  }
  return first;
}

describe.each(['SingleStream', 'MultiStream', 'Server', 'Offline'] as const)('%s logs as MLCommons tools read them', (scenario) => {
  it('detail log: every key the submission checker and TEST01/TEST04 scripts use', async () => {
    const result = await startTest(sut, recordingQsl(1000, 256), settings[scenario], { outdir: tempDir() });
    expect(result.validity).toBe('VALID');
    const log = mlperfLog(readFileSync(result.files.detail!, 'utf8'));
    for (const key of [
      'effective_scenario', 'result_validity', 'effective_sample_concatenate_permutation', 'effective_performance_sample_count',
      'effective_qsl_rng_seed', 'effective_sample_index_rng_seed', 'effective_schedule_rng_seed', 'early_stopping_met',
      'effective_target_latency_ns', 'result_99.00_percentile_latency_ns', 'effective_min_query_count',
      'effective_samples_per_query', 'effective_min_duration_ms', 'sut_name', 'result_mean_latency_ns', 'power_begin',
      'power_end', 'result_query_count', 'qsl_reported_total_count', 'effective_accuracy_sample_count', 'num_errors',
      metricKey[scenario],
    ]) {
      expect(log.has(key), key).toBe(true);
    }
    if (scenario !== 'Offline') expect(log.has('early_stopping_result')).toBe(true);
    expect(log.get('effective_scenario')).toBe(scenario);
    expect(log.get('result_validity')).toBe('VALID');
    expect(log.get('num_errors')).toBe(0);
    // power_* parse with the checker's format %m-%d-%Y %H:%M:%S.%f
    for (const key of ['power_begin', 'power_end']) expect(String(log.get(key))).toMatch(/^\d{2}-\d{2}-\d{4} \d{2}:\d{2}:\d{2}\.\d{3}$/);
  });

  it("summary: TEST04's line regexes find the scenario, the score and the verdict", async () => {
    const result = await startTest(sut, recordingQsl(1000, 256), settings[scenario], { outdir: tempDir() });
    const lines = readFileSync(result.files.summary!, 'utf8').split('\n');
    const valueOf = (re: RegExp) => lines.find((l) => re.test(l))?.split(': ').pop();
    expect(valueOf(/^Scenario/)).toBe(scenario);
    const score: Record<Scenario, RegExp> = {
      SingleStream: /.*Early stopping (90th|90.0th|99.9th) percentile estimate/,
      MultiStream: /.*Early stopping (99th|99.0th) percentile estimate/,
      Server: /Completed samples per second/,
      Offline: /Samples per second/,
    };
    const value = Number(valueOf(score[scenario]));
    expect(Number.isFinite(value) && value > 0).toBe(true);
    expect(valueOf(/^Result is/)).not.toBe('INVALID');
    expect(lines.some((l) => /\d+ ERROR/.test(l))).toBe(false);
  });
});

describe('accuracy log bytes', () => {
  it('logs exactly the bytes of every kind of response view (offsets, element sizes)', async () => {
    const backing = new Uint8Array([0xAA, 1, 2, 3, 4, 5, 6, 7, 8, 0xBB]);
    const views: Array<ArrayBuffer | ArrayBufferView> = [
      backing.subarray(1, 4),                          // 010203
      new Uint16Array(backing.buffer, 2, 2),           // 02030405
      new Float32Array(backing.buffer.slice(1, 9)),    // 0102030405060708
      new DataView(backing.buffer, 8, 2),              // 08BB
      backing.buffer.slice(0, 1),                      // AA
      Buffer.from([0xCD, 0xEF]),                       // CDEF
      new BigUint64Array([0x0102030405060708n]),       // 0807060504030201
    ];
    const expected = ['010203', '02030405', '0102030405060708', '08BB', 'AA', 'CDEF', '0807060504030201'];
    const viewSut = {
      name: 'views',
      issueQuery(samples: QuerySample[]) {
        querySamplesComplete(samples.map((s) => ({ id: s.id, data: views[s.index % views.length]! })));
      },
    };
    const result = await startTest(viewSut, recordingQsl(7, 7), { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir: tempDir() });
    const records = JSON.parse(readFileSync(result.files.accuracyLog!, 'utf8')) as { qsl_idx: number; data: string }[];
    expect(records.length).toBe(7);
    for (const r of records) expect(r.data).toBe(expected[r.qsl_idx]);
  });
});

describe('accuracy log as TEST01 verify_accuracy.py reads it', () => {
  it('json.load works and the unixmode line layout holds', async () => {
    const result = await startTest(sut, recordingQsl(300, 100), { scenario: 'SingleStream', mode: 'AccuracyOnly' }, { outdir: tempDir() });
    const text = readFileSync(result.files.accuracyLog!, 'utf8');
    const records = JSON.parse(text) as { seq_id: number; qsl_idx: number; data: string }[];
    expect(records.length).toBe(300);
    const lines = text.split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBe(300);
    for (const [i, line] of lines.entries()) {
      // unixmode: split on '": "'-ish separators; field 3 (after seq_id and its value) is qsl_idx's value.
      const fields = line.split(/ : |, /);
      expect(fields[0]).toBe('{ "seq_id"');
      expect(fields[2]).toBe('"qsl_idx"');
      expect(Number(fields[3])).toBe(records[i]!.qsl_idx);
      expect(line).toContain(`"qsl_idx" : ${records[i]!.qsl_idx},`);
      expect(records[i]!.data).toMatch(/^[0-9A-F]{8}$/);
    }
  });
});
