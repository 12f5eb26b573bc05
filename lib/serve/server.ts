/** A server started by `loadgen serve` or a test, on a loopback or given address. */
export interface RunningServer {
  /** e.g. 'http://127.0.0.1:8000' */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface ServeAddress {
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 8000; 0: any free port. */
  port?: number;
}
