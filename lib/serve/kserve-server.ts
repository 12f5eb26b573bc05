// INTERFACE ONLY (issue 12 integration): helper net-kserve replaces this file.
import type { RunningServer, ServeAddress } from './server.js';

export interface KServeServerOptions extends ServeAddress {
  /** Only 'demo-cnn' (the bundled model). */
  model: string;
}

/** A KServe v2 REST server for the bundled model on onnxruntime-node (`loadgen serve --model demo-cnn`). */
export async function startKServeServer(options: KServeServerOptions): Promise<RunningServer> {
  void options;
  throw new Error('startKServeServer: not built yet');
}
