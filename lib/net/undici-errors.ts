/**
 * What undici's errors mean for a sample, in the failure taxonomy of both
 * transports (docs/network-suts.md, "Failures"): its parser errors are
 * 'malformed_response', a connection closed or reset before the response
 * was complete is 'connection', its timeouts 'timeout', an abort 'cancelled'.
 */
import { errors } from 'undici';

import type { FailureKind } from './protocol.js';

/** undici error codes that mean a timeout. */
export const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
/** undici error codes for a request it would not send: not a socket's failure, never sent again. */
export const REQUEST_ERROR_CODES = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED', 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH']);
/** undici error codes for bytes that are not a valid response (besides llhttp's HTTPParserError). */
const MALFORMED_CODES = new Set(['UND_ERR_HEADERS_OVERFLOW']);

/** Why the transport itself ended a request (the abort reason it gives undici). */
export class TransportAbort extends Error {
  constructor(readonly kind: FailureKind, message: string) {
    super(message);
  }
}

/** A Transfer-Encoding header that says chunked and nothing else (no other coding is decoded here). */
export function onlyChunked(value: string | string[]): boolean {
  return typeof value === 'string' && value.trim().toLowerCase() === 'chunked';
}

/** What a request's error means for the sample; `status`: the last status line read (0: none). */
export function classify(error: Error, status: number): { kind: FailureKind; message: string } {
  if (error instanceof TransportAbort) return { kind: error.kind, message: error.message };
  const code = (error as { code?: unknown }).code;
  const text = typeof code === 'string' ? `${error.message} (${code})` : error.message;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) return { kind: 'timeout', message: text };
  if (code === 'UND_ERR_ABORTED' || code === 'UND_ERR_DESTROYED' || code === 'UND_ERR_CLOSED') return { kind: 'cancelled', message: text };
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return { kind: 'malformed_response', message: `the response body exceeds the size limit (${code})` };
  if (error instanceof errors.HTTPParserError || (typeof code === 'string' && MALFORMED_CODES.has(code))) return { kind: 'malformed_response', message: text };
  if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
    // undici raises this for a body cut short by a close, but also for any
    // error in a head that had a Content-Length (a bare LF, Transfer-Encoding
    // with it, a second one): a final status read means the head was whole.
    if (status >= 200) return { kind: 'connection', message: `the connection closed before the body's Content-Length was read (${code})` };
    return { kind: 'malformed_response', message: `the response head is not valid HTTP/1.1: its line endings, Content-Length or Transfer-Encoding (${code})` };
  }
  // undici refuses an interim 100 Continue it did not ask for, and an upgrade: bytes this client cannot read.
  if (code === 'UND_ERR_SOCKET' && (error.message === 'bad response' || error.message === 'bad upgrade'))
    return { kind: 'malformed_response', message: `${error.message}: a 100 Continue or upgrade response that was not asked for (${code})` };
  return { kind: 'connection', message: text };
}
