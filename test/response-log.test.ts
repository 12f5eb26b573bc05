// A logged sample's response reaches the accuracy log byte for byte from
// every completion call and every kind of data (issue 23 item 15: the
// completion call logs it in its own native call; a small Uint8Array is
// copied by lib into the addon's staging buffer, other data read by the
// addon), and an unlogged sample's response writes nothing.
import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import {
  clockNs,
  createSyntheticQsl,
  querySampleComplete,
  querySamplesComplete,
  querySamplesCompleteIds,
  startTest,
  type QuerySample,
  type SystemUnderTest,
  type TestResult,
  type TestSettingsInput,
} from '../lib/index.js';
import { noteHandOver } from '../lib/dispatch/handover.js';
import { loadNative } from '../lib/native/index.js';
import { tempDir } from './helpers.js';

interface AccuracyRecord {
  seq_id: number;
  qsl_idx: number;
  data: string;
}

// The response to QSL index i, of kind i % 9, as data and as the bytes it holds.
function response(i: number): { data: ArrayBufferView | ArrayBuffer | undefined; bytes: number[] } {
  const small = [i & 0xff, i >> 8, 0xee];
  switch (i % 9) {
    case 0: // a small Uint8Array, inside V8's heap: staged by lib
      return { data: Uint8Array.from(small), bytes: small };
    case 1: // a Buffer (a Uint8Array): staged
      return { data: Buffer.from(small), bytes: small };
    case 2: { // a Uint8Array at an offset into its buffer: staged from there
      const whole = Uint8Array.from([9, 9, ...small, 9]);
      return { data: whole.subarray(2, 5), bytes: small };
    }
    case 3: { // larger than the staging buffer: read by the addon
      const bytes = Array.from({ length: 100 }, (_, k) => (i + k) & 0xff);
      return { data: Uint8Array.from(bytes), bytes };
    }
    case 4: { // a small Float32Array (inside V8's heap): read by the addon
      const data = Float32Array.from([i + 0.5]);
      return { data, bytes: Array.from(new Uint8Array(data.buffer.slice(0))) };
    }
    case 5: { // a DataView at an offset
      const buffer = Uint8Array.from([7, ...small, 7]).buffer;
      return { data: new DataView(buffer, 1, 3), bytes: small };
    }
    case 6: // an ArrayBuffer
      return { data: Uint8Array.from(small).buffer, bytes: small };
    case 7: // none: logged empty
      return { data: undefined, bytes: [] };
    default: // empty
      return { data: new Uint8Array(0), bytes: [] };
  }
}

const hex = (bytes: number[]) => Buffer.from(bytes).toString('hex').toUpperCase();

type Call = 'querySamplesComplete' | 'querySampleComplete' | 'querySampleComplete with a stamp';

function respondingSut(call: Call): SystemUnderTest {
  return {
    name: `responding-${call}`,
    issueQuery(samples: QuerySample[]) {
      if (call === 'querySamplesComplete') {
        querySamplesComplete(samples.map((s) => ({ id: s.id, data: response(s.index).data })));
        return;
      }
      for (const s of samples) {
        const { data } = response(s.index);
        if (call === 'querySampleComplete') querySampleComplete(s.id, data);
        else querySampleComplete(s.id, data, undefined, clockNs());
      }
    },
  };
}

function records(result: TestResult): AccuracyRecord[] {
  const all = JSON.parse(readFileSync(result.files.accuracyLog!, 'utf8')) as AccuracyRecord[];
  expect(all.length).toBe(result.accuracyLogRecords);
  return all;
}

const SINGLE = { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 1000, minDurationMs: 0, minQueryCount: 200 } satisfies TestSettingsInput;
const MULTI = {
  scenario: 'MultiStream', multiStreamExpectedLatencyNs: 2000, multiStreamSamplesPerQuery: 8, minDurationMs: 0, minQueryCount: 50,
} satisfies TestSettingsInput;

describe('accuracy-log records from the completion calls', () => {
  it.each([
    ['querySamplesComplete', SINGLE],
    ['querySampleComplete', SINGLE],
    ['querySampleComplete with a stamp', SINGLE],
    ['querySamplesComplete', MULTI],
  ] as [Call, TestSettingsInput][])('%s (%s): every sample logged, each with its bytes', async (call, settings) => {
    const result = await startTest(respondingSut(call), createSyntheticQsl(90), { ...settings, accuracyLogProbability: 1 }, { outdir: tempDir() });
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
    const logged = records(result);
    expect(logged.length).toBe(result.counts.issuedSamples);
    expect(new Set(logged.map((r) => r.seq_id)).size).toBe(logged.length);
    for (const r of logged) expect({ qsl: r.qsl_idx, data: r.data }).toEqual({ qsl: r.qsl_idx, data: hex(response(r.qsl_idx).bytes) });
  });

  it('a performance run logs only its sampled samples, the rest completed with data write nothing', async () => {
    const result = await startTest(respondingSut('querySamplesComplete'), createSyntheticQsl(90), { ...SINGLE, minQueryCount: 400, accuracyLogProbability: 0.25 }, { outdir: tempDir() });
    const logged = records(result);
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.length).toBeLessThan(result.counts.issuedSamples);
    for (const r of logged) expect(r.data).toBe(hex(response(r.qsl_idx).bytes));
  });

  it('querySamplesCompleteIds: every logged sample with empty data', async () => {
    const sut: SystemUnderTest = {
      name: 'ids-only',
      issueQuery(samples: QuerySample[]) {
        querySamplesCompleteIds(Float64Array.from(samples, (s) => s.id));
      },
    };
    const result = await startTest(sut, createSyntheticQsl(90), { ...MULTI, accuracyLogProbability: 1 }, { outdir: tempDir() });
    const logged = records(result);
    expect(logged.length).toBe(result.counts.issuedSamples);
    expect(logged.every((r) => r.data === '')).toBe(true);
  });
});

describe('the addon checks the response data it is given', () => {
  it('a batch call\'s data that is not an Array, or shorter than the count: an error before anything is completed', () => {
    const native = loadNative();
    const ids = Float64Array.from([1, 2]);
    expect(() => native.completeBatch(ids, 2, undefined, 'data' as never)).toThrow(TypeError);
    expect(() => native.completeBatch(ids, 2, undefined, [new Uint8Array(1)])).toThrow(/data must have an element for every id completed \(2\), got 1/);
    expect(() => native.completeWithTokens(ids, new Float64Array(2), 2, undefined, {} as never)).toThrow(TypeError);
    expect(() => native.completeWithTokens(ids, new Float64Array(2), 2, undefined, [])).toThrow(RangeError);
  });

  it('completeOne with a staged length that is not one of the staging buffer: the sample completes, nothing is logged', async () => {
    const native = loadNative();
    const staging = native.responseStaging();
    expect(staging).toBe(native.responseStaging());
    const sut: SystemUnderTest = {
      name: 'staging-misuse',
      issueQuery(samples: QuerySample[]) {
        for (const s of samples) {
          const bad = [staging.length + 1, 2.5, -1, Number.NaN, 'junk'][s.index % 6];
          if (bad === undefined) staging.set([s.index, 0xcd]);
          noteHandOver(native.completeOne(s.id, (bad ?? 2) as never));
        }
      },
    };
    const result = await startTest(sut, createSyntheticQsl(60), { ...SINGLE, accuracyLogProbability: 1 }, { outdir: tempDir() });
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
    const logged = records(result);
    expect(logged.length).toBeGreaterThan(0);
    for (const r of logged) expect({ qsl: r.qsl_idx % 6, data: r.data }).toEqual({ qsl: 5, data: hex([r.qsl_idx, 0xcd]) });
  });
});
