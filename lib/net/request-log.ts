/**
 * `--request-log FILE` (TransportOptions.requestLog): one JSON line per
 * request a network SUT completed, for analysis elsewhere:
 *
 *   {"series":"performance","id":1043,"qsl_index":17,"node":"http://127.0.0.1:8000",
 *    "sent_ns":1204511,"first_token_ns":21630017,"last_byte_ns":98410233,
 *    "input_tokens":812,"output_tokens":128,"outcome":"ok","failure":null}
 *
 * Times are ns on the core's clock from the start of the request's series
 * (the origin of the summary's and the detail log's figures): sent = the
 * request's first byte written, first_token = the read that brought the
 * first output, last_byte = the read that ended the response (a failure:
 * when it failed); null where there is none. A line is built after the
 * sample was completed with its stamps (never inside a latency) and queued;
 * the file is written by asynchronous writes of at least 64 KiB, so memory
 * stays bounded: beyond MAX_PENDING_BYTES not yet written, lines are
 * dropped and counted (the SUT report says how many). No line carries a
 * message: a node is its URL, which holds no credentials (and passes the
 * secrets' redactor all the same).
 */
import { close, closeSync, mkdirSync, openSync, write, writeSync } from 'node:fs';
import { dirname } from 'node:path';

import { activeSeries } from '../dispatch/active.js';
import { SettingsError } from '../errors.js';
import { loadNative } from '../native/index.js';
import { echo, PATH_ECHO_LIMIT } from '../settings/messages.js';
import type { FailureKind } from './protocol.js';

/** Lines are written in writes of at least this many bytes (and at least every FLUSH_MS). */
const WRITE_BYTES = 64 * 1024;
const FLUSH_MS = 1000;
/** Lines not yet written beyond this are dropped (the disk is slower than the requests). */
export const MAX_PENDING_BYTES = 32 * 1024 * 1024;
/** Series remembered for lines of requests that outlive theirs. */
const SERIES_KEPT = 64;

interface SeriesOrigin {
  firstId: number;
  end: number;
  startNs: number;
  kind: string;
}

export class RequestLog {
  private readonly fd: number;
  private pending: string[] = [];
  private pendingBytes = 0;
  private writing = false;
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  private readonly series: SeriesOrigin[] = [];
  /** Lines written, and dropped (the queue was full, or a write failed). */
  written = 0;
  dropped = 0;
  /** The first write error (then nothing more is written). */
  error: string | undefined;

  /**
   * Creates (truncates) the file now, and its folder: a path that cannot be written is a
   * SettingsError naming it, before anything runs. `nodes`: each node's URL.
   */
  constructor(
    readonly path: string,
    nodes: readonly string[],
    redact: (text: string) => string,
  ) {
    try {
      // Its folder is made as startTest makes the log folder (--request-log out/requests.jsonl --outdir out).
      mkdirSync(dirname(path), { recursive: true });
      this.fd = openSync(path, 'w');
    } catch (error) {
      throw new SettingsError('requestLog', path, `requestLog: cannot write '${echo(path, PATH_ECHO_LIMIT)}': ${(error as Error).message}`);
    }
    this.nodes = nodes.map((url) => JSON.stringify(redact(url)));
    this.timer = setInterval(() => this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  private readonly nodes: string[];

  /**
   * One finished request. Stamps are clockNs() readings (0: none);
   * `failure` undefined: it succeeded, with these token counts.
   */
  record(
    id: number,
    index: number,
    node: number,
    sentNs: number,
    firstTokenNs: number,
    lastNs: number,
    inputTokens: number | undefined,
    outputTokens: number | undefined,
    failure: FailureKind | undefined,
  ): void {
    if (this.closed) return;
    const origin = this.originOf(id);
    const at = (ns: number): string => (ns > 0 && origin !== undefined ? String(ns - origin.startNs) : 'null');
    const line = `{"series":${origin !== undefined ? `"${origin.kind}"` : 'null'},"id":${id},"qsl_index":${index},"node":${this.nodes[node] ?? 'null'},` +
      `"sent_ns":${at(sentNs)},"first_token_ns":${at(firstTokenNs)},"last_byte_ns":${at(lastNs)},` +
      `"input_tokens":${inputTokens ?? 'null'},"output_tokens":${failure === undefined ? (outputTokens ?? 'null') : 'null'},` +
      `"outcome":"${failure === undefined ? 'ok' : 'failed'}","failure":${failure === undefined ? 'null' : `"${failure}"`}}\n`;
    if (this.error !== undefined || this.pendingBytes + line.length > MAX_PENDING_BYTES) {
      this.dropped++;
      return;
    }
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (this.pendingBytes >= WRITE_BYTES) this.flush();
  }

  /** The series of sample `id`: the current one (asked of the core once it issues), or one seen before. */
  private originOf(id: number): SeriesOrigin | undefined {
    const list = this.series;
    for (let i = list.length - 1; i >= 0; i--) {
      const s = list[i]!;
      if (id >= s.firstId && id < s.end) return s;
    }
    const firstId = activeSeries.firstId;
    if (id < firstId || id >= firstId + activeSeries.sampleCount) return undefined;
    const start = loadNative().seriesStart(firstId);
    if (start === null) return undefined;
    const origin = { firstId, end: firstId + activeSeries.sampleCount, startNs: start.startNs, kind: start.performance ? 'performance' : 'accuracy' };
    list.push(origin);
    if (list.length > SERIES_KEPT) list.shift();
    return origin;
  }

  /** Starts a write of what is queued, unless one is under way. */
  private flush(): void {
    if (this.writing || this.pending.length === 0 || this.error !== undefined) return;
    const text = this.pending.join('');
    const lines = this.pending.length;
    this.pending = [];
    this.pendingBytes = 0;
    this.writing = true;
    write(this.fd, text, null, 'utf8', (error) => {
      this.writing = false;
      if (error !== null) {
        this.error ??= error.message;
        this.dropped += lines;
        return;
      }
      this.written += lines;
      if (this.pendingBytes >= WRITE_BYTES && !this.closed) this.flush();
    });
  }

  /** After the run: every queued line written, the file closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    while (this.writing) await new Promise((r) => setTimeout(r, 1));
    if (this.error !== undefined) this.dropped += this.pending.length;
    else if (this.pending.length > 0) {
      try {
        writeSync(this.fd, this.pending.join(''));
        this.written += this.pending.length;
      } catch (error) {
        this.error ??= (error as Error).message;
        this.dropped += this.pending.length;
      }
    }
    this.pending = [];
    this.pendingBytes = 0;
    await new Promise<void>((resolve) => close(this.fd, () => resolve()));
  }

  /** Closes at once (the SUT could not be built): nothing was logged. */
  closeNow(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    closeSync(this.fd);
  }

  /** A line for the SUT report. */
  summary(): string {
    const lines = this.written + this.pending.length;
    const problems = [
      this.dropped > 0 ? `${this.dropped} lines NOT written (${this.error !== undefined ? `a write failed: ${echo(this.error, 120)}` : `more than ${MAX_PENDING_BYTES / 2 ** 20} MiB waited for the disk`})` : '',
    ].filter((p) => p !== '');
    return `Request log : ${echo(this.path, PATH_ECHO_LIMIT)}: ${lines} lines${problems.length > 0 ? `; ${problems.join('; ')}` : ''}`;
  }
}
