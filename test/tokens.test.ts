import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  createNullSut,
  firstTokenComplete,
  querySampleComplete,
  querySamplesComplete,
  querySamplesCompleteIds,
  startTest,
  type QuerySample,
  type SystemUnderTest,
} from '../lib/index.js';
import { readText, recordingQsl, tempDir } from './helpers.js';

const MS = 1_000_000;

/**
 * An LLM-like SUT: the first token after `ttftMs` (setTimeout), then
 * `nTokens` tokens in all, the last one `(nTokens - 1) * tpotMs` later.
 */
function tokenSut(ttftMs: number, tpotMs: number, nTokens: number): SystemUnderTest {
  return {
    name: 'token-sut',
    issueQuery(samples: QuerySample[]) {
      for (const sample of samples) {
        setTimeout(() => {
          firstTokenComplete(sample.id, new Uint8Array([0xab]));
          setTimeout(() => querySamplesComplete([{ id: sample.id, nTokens }]), (nTokens - 1) * tpotMs);
        }, ttftMs);
      }
    },
  };
}

describe('token latencies', () => {
  it('SingleStream: records TTFT and TPOT of a SUT with known timing and prints the reference token lines', async () => {
    const outdir = tempDir();
    const result = await startTest(
      tokenSut(2, 1, 5),
      recordingQsl(64),
      { scenario: 'SingleStream', useTokenLatencies: true, singleStreamExpectedLatencyNs: 6 * MS, minDurationMs: 0, minQueryCount: 40 },
      { outdir },
    );
    expect(result.errors.count).toBe(0);
    const t = result.tokens!;
    expect(t).toBeDefined();
    expect(t.tokenCount).toBe(5 * result.counts.completedSamples);
    expect(result.counts.completedSamples).toBe(40);
    // setTimeout fires no earlier than ~1 ms before its delay (libuv's cached loop time).
    expect(t.ttftNs!.min).toBeGreaterThanOrEqual(1 * MS);
    expect(t.ttftNs!.percentiles[50]).toBeLessThan(100 * MS);
    expect(t.ttftNs!.max).toBeLessThan(result.latencyNs.max);
    // 4 ms over 4 tokens after the first.
    expect(t.tpotNs!.min).toBeGreaterThanOrEqual(0.7 * MS);
    expect(t.tpotNs!.percentiles[50]).toBeLessThan(25 * MS);
    expect(t.tpotNs!.percentiles[99]).toBeGreaterThanOrEqual(t.tpotNs!.percentiles[50]);
    expect(t.tpotNs!.mean).toBeGreaterThanOrEqual(t.tpotNs!.min);
    expect(t.tpsWithLoadgenOverhead).toBeGreaterThan(0);
    expect(t.tpsWithoutLoadgenOverhead).toBeGreaterThan(0);
    expect(t.tokensPerSecond).toBeUndefined();
    expect(t.errors).toEqual({
      missingFirstToken: 0,
      firstTokenAfterCompletion: 0,
      duplicateFirstToken: 0,
      zeroTokens: 0,
      negativeTokens: 0,
      oneToken: 0,
    });

    const text = readText(join(outdir, 'mlperf_log_summary.txt'));
    expect(text).toBe(result.summaryText);
    expect(text).toContain(`90.0th first token percentile latency (ns) : ${t.ttftNs!.targetPercentile}\n`);
    expect(text).toContain('TTFT Early Stopping Result:\n');
    expect(text).toContain('TPOT Early Stopping Result:\n');
    expect(text).toMatch(/\nTPS w\/ loadgen overhead {9}: \d+\.\d\d\n/);
    expect(text).toMatch(/\nTPS w\/o loadgen overhead {8}: \d+\.\d\d\n/);
    expect(text).toContain(`Min First Token latency (ns)                : ${t.ttftNs!.min}\n`);
    expect(text).toContain(`Max First Token latency (ns)                : ${t.ttftNs!.max}\n`);
    expect(text).toContain(`Mean First Token latency (ns)               : ${t.ttftNs!.mean}\n`);
    expect(text).toContain(`50.00 percentile first token latency (ns)   : ${t.ttftNs!.percentiles[50]}\n`);
    expect(text).toContain(`99.90 percentile first token latency (ns)   : ${t.ttftNs!.percentiles[99.9]}\n`);
    expect(text).toContain(`Min Time per Output Token (ns)                : ${t.tpotNs!.min}\n`);
    expect(text).toContain(`Max Time per Output Token (ns)                : ${t.tpotNs!.max}\n`);
    expect(text).toContain(`Mean Time per Output Token (ns)               : ${t.tpotNs!.mean}\n`);
    expect(text).toContain(`90.00 percentile time to output token (ns)   : ${t.tpotNs!.percentiles[90]}\n`);
    expect(text).toContain('ttft_latency (ns): 100000000\ntpot_latency (ns): 100000000\n');
    expect(text).not.toContain('target_latency (ns)');
    expect(result.earlyStopping.message).toContain('TTFT Early Stopping Result:\n');

    const detail = readText(join(outdir, 'mlperf_log_detail.txt'));
    expect(detail).toContain('"key": "result_first_token_min_latency_ns"');
    expect(detail).toContain('"key": "result_time_to_output_token_mean"');
  });

  it('Server: completed tokens per second, and validity against serverTtftLatency / serverTpotLatency', async () => {
    const settings = {
      scenario: 'Server' as const,
      useTokenLatencies: true,
      serverTargetQps: 2000,
      minDurationMs: 500,
      minQueryCount: 100,
    };
    const ok = await startTest(tokenSut(2, 1, 4), recordingQsl(256), settings, { outdir: tempDir() });
    expect(ok.errors.count).toBe(0);
    expect(ok.checks.perfConstraintsMet).toBe(true);
    expect(ok.validity).toBe('VALID');
    const t = ok.tokens!;
    expect(t.tokenCount).toBe(4 * ok.counts.completedSamples);
    expect(t.completedTokensPerSecond).toBeGreaterThan(0);
    expect(t.earlyStopping!.tpotMessage).toContain('Run successful');
    expect(t.earlyStopping!.ttftMessage).toContain('Run successful');
    expect(ok.summaryText).toMatch(/\nCompleted tokens per second: \d+\.\d\d\n/);
    expect(ok.summaryText).toMatch(/\nCompleted tokens per second {17}: \d+\.\d\d\n/);
    expect(ok.summaryText).toContain('Min First Token latency (ns)');
    expect(ok.summaryText).toContain('Min Time per Output Token (ns)');

    // Bounds below what the SUT can do (2 ms to the first token, 1 ms a token).
    const tight = await startTest(
      tokenSut(2, 1, 4),
      recordingQsl(256),
      { ...settings, serverTtftLatency: 1000, serverTpotLatency: 1000 },
      { outdir: tempDir() },
    );
    expect(tight.validity).toBe('INVALID');
    expect(tight.checks.perfConstraintsMet).toBe(false);
    expect(tight.summaryText).toContain('  Performance constraints satisfied : NO\n');
    expect(tight.summaryText).toContain(
      ' * TTFT constrain not met: Reduce target QPS to improve latency.\n * TPOT constrain not met: Reduce target QPS to improve latency.\n',
    );
    expect(tight.checks.earlyStoppingMet).toBe(false);
    // TPOT is evaluated first; its failure leaves the TTFT text empty.
    expect(tight.tokens!.earlyStopping!.ttftMessage).toBe('');
    expect(tight.summaryText).toContain('TTFT Early Stopping Result:\n\nTPOT Early Stopping Result:\n');
  });

  it('Offline: token count only, "Tokens per second"', async () => {
    const outdir = tempDir();
    let expected = 0;
    const sut: SystemUnderTest = {
      name: 'offline-token-sut',
      issueQuery(samples) {
        const ids = new Float64Array(samples.length);
        const nTokens = new Float64Array(samples.length);
        samples.forEach((s, i) => {
          ids[i] = s.id;
          nTokens[i] = 2 + (s.index % 3);
          expected += nTokens[i]!;
        });
        setTimeout(() => querySamplesCompleteIds(ids, undefined, nTokens), 2);
      },
    };
    const result = await startTest(
      sut,
      recordingQsl(100),
      { scenario: 'Offline', useTokenLatencies: true, offlineExpectedQps: 100_000, minDurationMs: 0, minQueryCount: 1000 },
      { outdir },
    );
    expect(result.errors.count).toBe(0); // Offline needs no first token
    expect(result.validity).toBe('VALID');
    const t = result.tokens!;
    expect(t.tokenCount).toBe(expected);
    expect(t.ttftNs).toBeUndefined();
    expect(t.tpotNs).toBeUndefined();
    expect(t.tokensPerSecond).toBeCloseTo(expected / result.timing.maxLatencySeconds, 6);
    expect(result.summaryText).toMatch(/\nTokens per second: [\d.e+]+\n/);
    expect(result.summaryText).not.toContain('First Token');
    expect(result.summaryText).not.toContain('Early Stopping Result');
  });

  it('inferTokenLatencies scales the sample rate by tokenLatencyScalingFactor without recording anything', async () => {
    const offline = await startTest(
      createNullSut(),
      recordingQsl(100),
      { scenario: 'Offline', inferTokenLatencies: true, tokenLatencyScalingFactor: 7, minDurationMs: 0, minQueryCount: 1000 },
      { outdir: tempDir() },
    );
    expect(offline.errors.count).toBe(0);
    expect(offline.tokens!.tokenCount).toBe(0);
    expect(offline.tokens!.inferredTokensPerSecond).toBeCloseTo(7 * offline.samplesPerSecond!, 3);
    expect(offline.summaryText).toContain(`Tokens per second (inferred): `);
    expect(offline.summaryText).not.toContain('Tokens per second: ');

    const server = await startTest(
      createNullSut(),
      recordingQsl(100),
      { scenario: 'Server', inferTokenLatencies: true, tokenLatencyScalingFactor: 7, serverTargetQps: 1000, minDurationMs: 100, minQueryCount: 50 },
      { outdir: tempDir() },
    );
    const expected = (7 * (server.counts.completedSamples - 1)) / server.timing.finalQueryAllSamplesDoneSeconds;
    expect(server.tokens!.inferredCompletedTokensPerSecond).toBeCloseTo(expected, 3);
    expect(server.summaryText).toMatch(/\nCompleted tokens per second \(inferred\): \d+\.\d\d\n/);
    expect(server.summaryText).toContain('Early Stopping Result:\n');
    expect(server.summaryText).not.toContain('TTFT');
  });

  it('fails samples completed without a first token; reports bad token counts and late or duplicate first tokens as errors', async () => {
    const outdir = tempDir();
    let k = 0;
    const sut: SystemUnderTest = {
      name: 'faulty-token-sut',
      issueQuery([sample]) {
        const id = sample!.id;
        switch (k++ % 6) {
          case 0: // no first token
            querySamplesComplete([{ id, nTokens: 4 }]);
            break;
          case 1: // nTokens missing
            firstTokenComplete(id);
            querySamplesComplete([{ id }]);
            break;
          case 2:
            firstTokenComplete(id);
            querySampleComplete(id, undefined, -3);
            break;
          case 3:
            firstTokenComplete(id);
            querySampleComplete(id, undefined, 1);
            break;
          case 4: // first token after the completion: ignored, so also missing
            querySampleComplete(id, undefined, 4);
            firstTokenComplete(id);
            break;
          default:
            firstTokenComplete(id);
            firstTokenComplete(id);
            querySampleComplete(id, undefined, 4);
        }
      },
    };
    const result = await startTest(
      sut,
      recordingQsl(64),
      { scenario: 'SingleStream', useTokenLatencies: true, singleStreamExpectedLatencyNs: 10_000, minDurationMs: 0, minQueryCount: 60 },
      { outdir },
    );
    expect(result.counts.completedSamples).toBe(60);
    expect(result.tokens!.errors).toEqual({
      missingFirstToken: 20,
      firstTokenAfterCompletion: 10,
      duplicateFirstToken: 10,
      zeroTokens: 10,
      negativeTokens: 10,
      oneToken: 10,
    });
    // Completed with no first token (cases 0 and 4): failed samples, the run INVALID.
    expect(result.errors.failedSamples.total).toBe(20);
    expect(result.errors.failedSamples.byKind.no_first_token).toBe(20);
    expect(result.validity).toBe('INVALID');
    expect(result.invalidReasons).toContain('20 samples failed (no_first_token 20).');
    expect(result.errors.duplicateIds).toBe(0);
    // 20 failure lines and the reference's 50 token errors.
    expect(result.errors.count).toBe(70);
    expect(result.summaryText).toContain('70 ERRORS encountered. See detailed log.');
    // Coerced counts (0, -3 -> 0, 1 -> 0) add nothing; failed samples count
    // none: 1 of 6 (the duplicate first token) reports 4 tokens.
    expect(result.tokens!.tokenCount).toBe(10 * 4);
    // Fewer than 2 tokens: no TPOT (the reference's would be negative); no
    // TTFT is the INT64_MIN marker.
    expect(result.tokens!.tpotNs!.min).toBeGreaterThanOrEqual(0);
    expect(result.tokens!.ttftNs!.min).toBeGreaterThanOrEqual(0);
    expect(result.summaryText).not.toContain('-9223372036854775808');

    const detail = readText(join(outdir, 'mlperf_log_detail.txt'));
    const lines = (text: string) => detail.split('\n').filter((l) => l.includes('"error_runtime"') && l.includes(text)).length;
    expect(lines("Attempted to record a sample latency before it's first token latency")).toBe(0);
    expect(lines('Sample failed (no_first_token): completed with no first token recorded')).toBe(20);
    expect(lines('n_tokens argument missing or attempted to record 0 as number of tokens')).toBe(10);
    expect(lines('Attempted to record a negative number of tokens')).toBe(10);
    expect(lines('Number of tokens need to be greater than 1')).toBe(10);
    expect(lines('Attempted to record token latency after sample was completed')).toBe(10);
    expect(lines('Attempted to complete a sample twice.')).toBe(10);
  });

  it('an accuracy run whose completions logged errors is not valid: MLCommons\' checker fails its folder', async () => {
    // Every sample has its first token, none a token count: n_tokens errors, nothing failed.
    const sut: SystemUnderTest = {
      name: 'no-count-sut',
      issueQuery(samples) {
        for (const { id } of samples) {
          firstTokenComplete(id, new Uint8Array([1]));
          querySampleComplete(id, new Uint8Array([1, 2]));
        }
      },
    };
    const result = await startTest(sut, recordingQsl(8), { scenario: 'Offline', mode: 'AccuracyOnly', useTokenLatencies: true }, { outdir: tempDir() });
    expect(result.counts.completedSamples).toBe(8);
    expect(result.errors.failedSamples.total).toBe(0);
    expect(result.errors.count).toBe(8);
    expect(result.valid).toBe(false);
    expect(result.invalidReasons).toEqual([
      '8 errors were logged in mlperf_log_detail.txt (completions with no token count or 0: 8); MLCommons\' checker fails an accuracy run with any.',
    ]);
    // The same SUT with its counts: valid.
    const counted: SystemUnderTest = {
      name: 'count-sut',
      issueQuery(samples) {
        for (const { id } of samples) {
          firstTokenComplete(id, new Uint8Array([1]));
          querySampleComplete(id, new Uint8Array([1, 2]), 2);
        }
      },
    };
    const ok = await startTest(counted, recordingQsl(8), { scenario: 'Offline', mode: 'AccuracyOnly', useTokenLatencies: true }, { outdir: tempDir() });
    expect(ok.errors.count).toBe(0);
    expect(ok.valid).toBe(true);
  });

  it.each(['SingleStream', 'Offline'] as const)('%s accuracy log records carry the token fields', async (scenario) => {
    const outdir = tempDir();
    const sut: SystemUnderTest = {
      name: 'acc-token-sut',
      issueQuery(samples) {
        for (const s of samples) {
          firstTokenComplete(s.id, new Uint8Array([0xab, s.index]));
          querySamplesComplete([{ id: s.id, data: new Uint8Array([0x7f]), nTokens: 3 + s.index }]);
        }
      },
    };
    const result = await startTest(sut, recordingQsl(8), { scenario, mode: 'AccuracyOnly', useTokenLatencies: true }, { outdir });
    expect(result.accuracyLogRecords).toBe(8);
    const records = JSON.parse(readText(join(outdir, 'mlperf_log_accuracy.json'))) as Record<string, unknown>[];
    expect(records).toHaveLength(8);
    for (const r of records) {
      const index = r.qsl_idx as number;
      expect(r.data).toBe('7F');
      expect(r.token_count).toBe(3 + index);
      if (scenario === 'Offline') expect(r).not.toHaveProperty('token_data');
      else expect(r.token_data).toBe(`AB${index.toString(16).toUpperCase().padStart(2, '0')}`);
    }
    const raw = readText(join(outdir, 'mlperf_log_accuracy.json'));
    if (scenario === 'Offline') expect(raw).toMatch(/"data" : "7F", "token_count" : \d+ \}/);
    else expect(raw).toMatch(/"data" : "7F", "token_data" : "AB[0-9A-F]{2}", "token_count" : \d+ \}/);
  });

  it('a response with a token count but no first token (one in five) is a failed no_first_token sample, never an INT64_MIN TTFT', async () => {
    let k = 0;
    // A stream whose usage chunk came but no text: completed with nTokens, no first token.
    const sut: SystemUnderTest = {
      name: 'usage-only-sut',
      issueQuery(samples) {
        for (const s of samples) {
          const i = k++;
          setTimeout(() => {
            if (i % 5 !== 0) firstTokenComplete(s.id);
            querySampleComplete(s.id, undefined, 7);
          }, 0);
        }
      },
    };
    const outdir = tempDir();
    const result = await startTest(sut, recordingQsl(64),
      { scenario: 'Server', useTokenLatencies: true, serverTargetQps: 2000, minDurationMs: 0, minQueryCount: 100 },
      { outdir });
    const failed = result.errors.failedSamples;
    expect(failed.byKind.no_first_token).toBe(20);
    expect(failed.total).toBe(20);
    expect(result.tokens!.errors.missingFirstToken).toBe(20);
    expect(result.validity).toBe('INVALID');
    expect(result.invalidReasons).toContain('20 samples failed (no_first_token 20).');
    // The 80 that had a first token make the statistics, nothing else.
    expect(result.tokens!.tokenCount).toBe(80 * 7);
    expect(result.tokens!.ttftNs!.min).toBeGreaterThanOrEqual(0);
    expect(result.tokens!.tpotNs!.min).toBeGreaterThanOrEqual(0);
    const detail = readText(join(outdir, 'mlperf_log_detail.txt'));
    expect(detail).not.toContain('-9223372036854775808');
    expect(result.summaryText).not.toContain('-9223372036854775808');
    expect(detail).not.toContain("Attempted to record a sample latency before it's first token latency");
    expect(detail.split('\n').filter((l) => l.includes('"Sample failed (no_first_token): ')).length).toBe(20);
  });

  it('firstTokenComplete is ignored without useTokenLatencies and validates its data', async () => {
    expect(() => firstTokenComplete(1, 'x' as unknown as Uint8Array)).toThrow(TypeError);
    const sut: SystemUnderTest = {
      name: 'plain-sut',
      issueQuery(samples) {
        for (const s of samples) firstTokenComplete(s.id);
        querySamplesComplete(samples.map((s) => ({ id: s.id, nTokens: 1 })));
      },
    };
    const result = await startTest(
      sut,
      recordingQsl(64),
      { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 10_000, minDurationMs: 0, minQueryCount: 20 },
      { outdir: tempDir() },
    );
    expect(result.errors.count).toBe(0);
    expect(result.tokens).toBeUndefined();
    expect(result.summaryText).not.toContain('First Token');
  });
});
