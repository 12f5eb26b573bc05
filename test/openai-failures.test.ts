import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { startTest } from '../lib/index.js';
import { loadNative } from '../lib/native/index.js';
import { createOpenAiSut } from '../lib/net/openai.js';
import type { NetworkSut } from '../lib/net/types.js';
import { startOpenAiStub } from '../lib/serve/openai-stub.js';
import { readText, tempDir } from './helpers.js';

const MS = 1_000_000;
const dir = tempDir('loadgen-openai-fail-');
const dataset = join(dir, 'prompts.jsonl');
writeFileSync(dataset, '{"prompt": "a b c", "max_tokens": 4}\n');

// Both transports where the native client exists (Linux).
const transports = loadNative().nativeHttpAvailable ? (['undici', 'native'] as const) : (['undici'] as const);

describe('failed OpenAI responses', () => {
  for (const transport of transports) for (const stream of [true, false]) {
    it(`are counted by kind, logged naming the node, and make the run INVALID (${stream ? 'stream' : 'no-stream'}, ${transport})`, async () => {
      // SingleStream sends one request at a time: request n is the n-th sample.
      const stub = await startOpenAiStub({
        port: 0,
        ttftMs: 1,
        tpotMs: 1,
        faults: { 2: 'malformed-chunk', 4: 'error-event', 6: 'no-done', 8: 'reset', 10: 'http-500' },
      });
      const outdir = tempDir();
      let sut: NetworkSut | undefined;
      try {
        sut = await createOpenAiSut({ urls: [stub.url], model: stub.model, dataset, stream, transport });
        expect(sut.stats().transport).toBe(transport);
        const result = await startTest(
          sut,
          sut.qsl,
          { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 20 * MS, minDurationMs: 0, minQueryCount: 12, useTokenLatencies: stream },
          { outdir },
        );
        const failed = (result.errors as unknown as { failedSamples: { total: number; byKind: Record<string, number> } }).failedSamples;
        expect(result.valid).toBe(false);
        expect(result.invalidReasons.join('\n')).toMatch(/samples? failed/);
        expect(result.counts.completedSamples).toBe(12);
        // The stub's 'reset' ends the connection after part of the response (a response had begun: never sent again).
        expect(failed.total).toBe(5);
        expect(failed.byKind).toEqual({ malformed_response: 3, connection: 1, http_status: 1, timeout: 0, cancelled: 0, no_first_token: 0 });
        // Failed samples are not also token errors.
        if (stream) expect(result.tokens!.errors.missingFirstToken + result.tokens!.errors.zeroTokens).toBe(0);
        const detail = readText(join(outdir, 'mlperf_log_detail.txt'));
        const host = stub.url.replace('http://', '');
        expect(detail).toContain(host);
        expect(detail).toContain('malformed_response');
        expect(sut.stats().nodes[0]!.failed.malformed_response).toBe(3);
      } finally {
        await sut?.close();
        await stub.close();
      }
    });
  }
});
