import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { querySamplesComplete, startTest, type QuerySample, type SystemUnderTest } from '../lib/index.js';
import { recordingQsl, tempDir } from './helpers.js';

/** Completes inside issueQuery with the QSL index as 4 little-endian bytes (the golden runs' SUT). */
function payloadSut(): SystemUnderTest & { issued: number[] } {
  const issued: number[] = [];
  return {
    name: 'payload',
    issued,
    issueQuery(samples: QuerySample[]) {
      querySamplesComplete(
        samples.map((s) => {
          issued.push(s.index);
          const data = new Uint8Array(4);
          new DataView(data.buffer).setUint32(0, s.index, true);
          return { id: s.id, data };
        }),
      );
    },
  };
}

interface AccuracyRecord {
  seq_id: number;
  qsl_idx: number;
  data: string;
}

function readAccuracyLog(path: string): AccuracyRecord[] {
  return JSON.parse(readFileSync(path, 'utf8')) as AccuracyRecord[];
}

function hex32le(n: number): string {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b.toString('hex').toUpperCase();
}

describe('AccuracyOnly', () => {
  it('issues every sample once, in load rounds of the performance sample count, and logs every response', async () => {
    const qsl = recordingQsl(100, 40);
    const sut = payloadSut();
    const outdir = tempDir();
    const result = await startTest(sut, qsl, { scenario: 'SingleStream', mode: 'AccuracyOnly' }, { outdir });
    expect(result.mode).toBe('AccuracyOnly');
    expect(result.valid).toBe(true);
    expect(qsl.calls).toEqual(['load', 'unload', 'load', 'unload', 'load', 'unload']);
    expect(qsl.loaded.map((l) => l.length)).toEqual([40, 40, 20]);
    expect([...sut.issued].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const records = readAccuracyLog(result.files.accuracyLog!);
    expect(records.length).toBe(100);
    expect(result.accuracyLogRecords).toBe(100);
    for (const r of records) expect(r.data).toBe(hex32le(r.qsl_idx));
    expect(records.map((r) => r.seq_id).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // No performance results: the summary holds only the footer.
    expect(result.summaryText).toBe('\nNo warnings encountered during test.\n\nNo errors encountered during test.\n');
  });

  it('matches the reference example: SingleStream accuracy, total = pc = 10', async () => {
    // spec/20 §8 example 3 (official seeds): loaded 1 5 7 6 0 8 3 2 9 4, issued 2 5 3 8 7 9 0 1 6 4.
    const qsl = recordingQsl(10, 10);
    const sut = payloadSut();
    await startTest(sut, qsl, {
      scenario: 'SingleStream', mode: 'AccuracyOnly',
      qslRngSeed: '2085463073848966840', sampleIndexRngSeed: '2747215439041700203', scheduleRngSeed: '16159082839903944936',
    }, { outdir: tempDir() });
    expect(qsl.loaded[0]).toEqual([1, 5, 7, 6, 0, 8, 3, 2, 9, 4]);
    expect(sut.issued).toEqual([2, 5, 3, 8, 7, 9, 0, 1, 6, 4]);
  });

  it('MultiStream accuracy issues the padding duplicates and completes every query', async () => {
    const sut = payloadSut();
    const result = await startTest(sut, recordingQsl(30, 12), {
      scenario: 'MultiStream', mode: 'AccuracyOnly', multiStreamSamplesPerQuery: 4,
    }, { outdir: tempDir() });
    expect(result.valid).toBe(true);
    expect(result.counts.issuedSamples % 4).toBe(0);
    expect(new Set(sut.issued).size).toBe(30);
  });
});

describe('SubmissionRun', () => {
  it('runs accuracy then performance; sequence ids continue; the summary says SubmissionRun', async () => {
    const qsl = recordingQsl(50, 20);
    const outdir = tempDir();
    const result = await startTest(payloadSut(), qsl, {
      scenario: 'Offline', mode: 'SubmissionRun', minDurationMs: 0, minQueryCount: 100,
    }, { outdir });
    expect(result.mode).toBe('SubmissionRun');
    expect(result.valid).toBe(true);
    // 3 accuracy rounds (20, 20, 10) then the performance set.
    expect(qsl.loaded.map((l) => l.length)).toEqual([20, 20, 10, 20]);
    expect(result.summaryText).toContain('Mode     : SubmissionRun\n');
    const records = readAccuracyLog(result.files.accuracyLog!);
    expect(records.length).toBe(50); // performance mode logs nothing at probability 0
    expect(Math.max(...records.map((r) => r.seq_id))).toBe(49);
  });
});

describe('accuracy-log sampling in performance mode', () => {
  it('logs exactly the samples the reference would (spec/20 §8 example 8)', async () => {
    const settings = {
      scenario: 'SingleStream', qslRngSeed: 11n, sampleIndexRngSeed: 22n, scheduleRngSeed: 33n,
      minDurationMs: 10, minQueryCount: 30, singleStreamExpectedLatencyNs: 1e6,
      accuracyLogProbability: 0.3, accuracyLogRngSeed: 7n,
    } as const;
    const sut = payloadSut();
    const qsl = recordingQsl(100, 20);
    const result = await startTest(sut, qsl, settings, { outdir: tempDir() });
    expect(qsl.loaded[0]).toEqual([5, 18, 17, 2, 8, 13, 3, 16, 6, 12, 1, 9, 0, 14, 15, 7, 4, 10, 11, 19]);
    expect(sut.issued.slice(0, 10)).toEqual([5, 17, 7, 3, 19, 6, 15, 5, 13, 10]);
    const logged = readAccuracyLog(result.files.accuracyLog!).map((r) => r.seq_id).sort((a, b) => a - b);
    const issuedCount = result.counts.issuedSamples;
    expect(logged).toEqual([1, 2, 7, 8, 9, 11, 13, 15, 18, 20].filter((id) => id < issuedCount));

    const targeted = await startTest(payloadSut(), recordingQsl(100, 20), { ...settings, accuracyLogSamplingTarget: 5 }, { outdir: tempDir() });
    const loggedTarget = readAccuracyLog(targeted.files.accuracyLog!).map((r) => r.seq_id).sort((a, b) => a - b);
    expect(loggedTarget).toEqual([1, 13, 18, 20].filter((id) => id < targeted.counts.issuedSamples));
  });

  it('a completion without data is logged with empty data, as the reference does', async () => {
    const sut: SystemUnderTest = { name: 'no-data', issueQuery: (s) => querySamplesComplete(s) };
    const result = await startTest(sut, recordingQsl(16), { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir: tempDir() });
    const records = readAccuracyLog(result.files.accuracyLog!);
    expect(records.length).toBe(16);
    expect(records.every((r) => r.data === '')).toBe(true);
    // Performance mode at probability 0: nothing logged, the file is the empty list.
    const perf = await startTest(sut, recordingQsl(16), { scenario: 'Offline', minDurationMs: 0, minQueryCount: 16 }, { outdir: tempDir() });
    expect(readFileSync(perf.files.accuracyLog!, 'utf8')).toBe('[\n]\n');
  });

  it('writes the reference layout byte for byte', async () => {
    const result = await startTest(payloadSut(), recordingQsl(2, 2), { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir: tempDir() });
    const text = readFileSync(result.files.accuracyLog!, 'utf8');
    expect(text).toMatch(/^\[\n\{ "seq_id" : \d+, "qsl_idx" : \d+, "data" : "[0-9A-F]{8}" \},\n\{ "seq_id" : \d+, "qsl_idx" : \d+, "data" : "[0-9A-F]{8}" \}\n\]\n$/);
  });
});
