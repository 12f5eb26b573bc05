/**
 * The one redactor of a network SUT's secrets: the API key (the
 * credentials of the `Authorization: Bearer` value it is sent as) and the
 * values of secret request headers. Servers quote keys partly ("Incorrect API key provided:
 * sk-…0123456789******"), so not only the whole secret is hidden: every run
 * of 8 or more characters that occur contiguously in a secret is replaced
 * with {@link REDACTED}, whatever came before or after it. Shorter secrets
 * are hidden where they occur whole.
 *
 * Matching is a rolling hash of each 8-character window of the text looked
 * up in a set of the secrets' window hashes (a hit is confirmed against the
 * window itself), so a text is scanned once, with no string made per window.
 */

/** What stands in the text where a secret's characters were. */
export const REDACTED = '<redacted>';

/** The shortest run of a secret's characters that is hidden wherever it appears. */
export const MIN_SECRET_RUN = 8;

/**
 * Request headers whose values are secrets, lower case: credentials of the
 * server, a proxy or a session. A mapping module (`--sut http`) adds its own
 * with `secretHeaders`.
 */
export const SECRET_HEADER_NAMES: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'api-key',
  'x-auth-token',
];

/** The scheme before an Authorization value's credentials (RFC 9110 auth-scheme, then white space). */
const AUTH_SCHEME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+[ \t]+/;

const WINDOW = MIN_SECRET_RUN;
// A polynomial hash over UTF-16 code units (mod 2^32).
const BASE = 0x01000193;
// BASE^(WINDOW-1) mod 2^32: the weight of the unit that leaves the window.
const LEAVING = (() => {
  let p = 1;
  for (let i = 1; i < WINDOW; i++) p = Math.imul(p, BASE);
  return p;
})();

function windowHash(text: string, at: number): number {
  let h = 0;
  for (let i = 0; i < WINDOW; i++) h = (Math.imul(h, BASE) + text.charCodeAt(at + i)) | 0;
  return h;
}

/** A set of secrets and the redaction of any text against them. */
export class Secrets {
  private readonly values = new Set<string>();
  /** Hash of every 8-character window of every secret -> those windows. */
  private readonly windows = new Map<number, string[]>();
  /** Secrets shorter than a window: hidden only where they occur whole. */
  private readonly short: string[] = [];
  private readonly extraHeaderNames = new Set<string>();

  /** No secret yet: redact() returns every text as it is. */
  get empty(): boolean {
    return this.values.size === 0;
  }

  /** How many secrets it holds (grows as requests are built: a change to hand on). */
  get size(): number {
    return this.values.size;
  }

  /**
   * The secrets, in the order added: what a redactor elsewhere needs to
   * apply this same rule (the native client's, native/http_secrets.h).
   * Never to be written anywhere.
   */
  list(): string[] {
    return [...this.values];
  }

  /** Adds a secret (an empty or undefined one is no secret). */
  add(secret: string | undefined): void {
    if (secret === undefined || secret === '' || this.values.has(secret)) return;
    this.values.add(secret);
    if (secret.length < WINDOW) {
      this.short.push(secret);
      // Longest first: a short secret inside another is not left half shown.
      this.short.sort((a, b) => b.length - a.length);
      return;
    }
    for (let i = 0; i + WINDOW <= secret.length; i++) {
      const h = windowHash(secret, i);
      const gram = secret.slice(i, i + WINDOW);
      const list = this.windows.get(h);
      if (list === undefined) this.windows.set(h, [gram]);
      else if (!list.includes(gram)) list.push(gram);
    }
  }

  /** The API key (sent as `Authorization: Bearer <key>`: the key is that value's secret part). */
  addApiKey(key: string | undefined): void {
    this.add(key);
  }

  /** More header names (any case) whose values are secrets, beyond {@link SECRET_HEADER_NAMES}. */
  addHeaderNames(names: Iterable<string>): void {
    for (const name of names) this.extraHeaderNames.add(name.toLowerCase());
  }

  /** Whether a header of this name carries a secret. */
  isSecretHeader(name: string): boolean {
    const lower = name.toLowerCase();
    return SECRET_HEADER_NAMES.includes(lower) || this.extraHeaderNames.has(lower);
  }

  /**
   * Adds the values of the secret headers among `headers`. Of an
   * (proxy-)authorization value, the credentials after its scheme are the
   * secret ('Bearer ' is no secret, and hiding it would eat the space before
   * every quoted key).
   */
  addHeaders(headers: Readonly<Record<string, unknown>> | undefined): void {
    if (headers === undefined || headers === null || typeof headers !== 'object') return;
    for (const name of Object.keys(headers)) {
      const value = headers[name];
      if (typeof value !== 'string' || !this.isSecretHeader(name)) continue;
      const lower = name.toLowerCase();
      const scheme = lower === 'authorization' || lower === 'proxy-authorization' ? AUTH_SCHEME.exec(value) : null;
      this.add(scheme !== null && scheme[0].length < value.length ? value.slice(scheme[0].length) : value);
    }
  }

  /** `text` with every run of a secret's characters (8 or more; a short secret whole) replaced by {@link REDACTED}. */
  redact(text: string): string {
    if (this.values.size === 0 || typeof text !== 'string') return text;
    let out = this.windows.size === 0 || text.length < WINDOW ? text : this.redactRuns(text);
    for (const secret of this.short) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }

  /**
   * An error's message (and stack) redacted in place, for errors that carry
   * a server's or a user module's text to the output; the same error back
   * (a value that is not an Error becomes one, its text redacted).
   */
  redactError<T>(error: T): T | Error {
    if (this.values.size === 0) return error;
    if (!(error instanceof Error)) {
      if (typeof error === 'string') return new Error(this.redact(error));
      return error;
    }
    try {
      const message = this.redact(error.message);
      if (message !== error.message) error.message = message;
      if (typeof error.stack === 'string') {
        const stack = this.redact(error.stack);
        if (stack !== error.stack) error.stack = stack;
      }
    } catch {
      // A frozen error keeps its text; it is still the caller's to print.
    }
    return error;
  }

  private redactRuns(text: string): string {
    const windows = this.windows;
    let out = '';
    let copied = 0;  // text[0, copied) is in `out` already
    let runStart = -1;
    let runEnd = -1;
    let h = windowHash(text, 0);
    for (let i = 0; ; i++) {
      const list = windows.get(h);
      if (list !== undefined && list.includes(text.slice(i, i + WINDOW))) {
        if (runStart >= 0 && i <= runEnd) {
          runEnd = i + WINDOW;
        } else {
          if (runStart >= 0) {
            out += text.slice(copied, runStart) + REDACTED;
            copied = runEnd;
          }
          runStart = i;
          runEnd = i + WINDOW;
        }
      }
      if (i + WINDOW >= text.length) break;
      h = (Math.imul(h - Math.imul(text.charCodeAt(i), LEAVING), BASE) + text.charCodeAt(i + WINDOW)) | 0;
    }
    if (runStart < 0) return text;
    return out + text.slice(copied, runStart) + REDACTED + text.slice(runEnd);
  }
}

/**
 * The secrets a transport redacts for a protocol: the protocol's own (its
 * secret headers, e.g. a mapping module's), with the API key added, so that
 * every transport of one SUT shares one set; a new set when the protocol
 * has none.
 */
export function secretsOf(protocol: { readonly secrets?: Secrets | undefined }, apiKey: string | undefined): Secrets {
  const secrets = protocol.secrets instanceof Secrets ? protocol.secrets : new Secrets();
  secrets.addApiKey(apiKey);
  return secrets;
}
