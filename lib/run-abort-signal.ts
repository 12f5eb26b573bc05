/**
 * What the `signal` options of the public API are: a standard `AbortSignal`
 * (`new AbortController().signal`, `AbortSignal.timeout(ms)`). Written out
 * here, at the bottom of the layers, so that the public types need neither
 * the DOM library nor @types/node; every AbortSignal matches it.
 */
export interface RunAbortSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
