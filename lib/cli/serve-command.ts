/**
 * `loadgen serve`: a server to benchmark on any machine, on loopback by
 * default. `--model demo-cnn` serves the bundled model through the KServe v2
 * REST protocol (lib/serve/kserve-server.ts); `--openai-stub` a deterministic
 * OpenAI-compatible token streamer (lib/serve/openai-stub.ts). Prints one
 * line with the URL once listening; SIGINT/SIGTERM close it (exit 0).
 */
import { Command, InvalidArgumentError } from 'commander';

import { addOpenAiStubOptions, OPENAI_STUB_CLI_KEYS, openAiStubFlag, openAiStubOptionsFromCli, openAiStubTokenizerFromCli, type OpenAiStubCliValues } from './openai-stub-options.js';

import { SettingsError } from '../errors.js';
import { echo } from '../settings/messages.js';
import { DEFAULT_SERVE_HOST, DEFAULT_SERVE_PORT, SERVABLE_MODELS, startKServeServer } from '../serve/kserve-server.js';
import { startOpenAiStub } from '../serve/openai-stub.js';
import type { RunningServer } from '../serve/server.js';
import { EXIT_SIGINT, EXIT_SIGTERM, EXIT_VALID } from './exit-codes.js';
import { positiveInteger } from './options.js';

export interface ServeOptions extends OpenAiStubCliValues {
  model?: string;
  openaiStub?: boolean;
  host?: string;
  port?: number;
  workers?: number;
}

function portNumber(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError(`--port must be an integer in [0, 65535] (0: any free port), got '${echo(value)}'.`);
  return port;
}

export function registerServeCommand(program: Command): void {
  const command = program
    .command('serve')
    .description('serve the bundled model (KServe v2) or a token streamer (OpenAI API) to benchmark with `loadgen run --sut kserve|openai`')
    .option('--model <name>', `serve this bundled model through the KServe v2 REST protocol (${SERVABLE_MODELS.join(', ')})`)
    .option('--openai-stub', 'serve a deterministic OpenAI-compatible token streamer instead')
    .option('--host <address>', `address to listen on (default ${DEFAULT_SERVE_HOST})`)
    .option('--port <n>', `port to listen on (default ${DEFAULT_SERVE_PORT}; 0: any free port)`, portNumber)
    .option('--workers <n>', '--model: onnxruntime worker threads (default: one per core, up to 4)', positiveInteger('--workers'));
  addOpenAiStubOptions(command)
    .addHelpText(
      'after',
      '\nPrints one line with the URL once listening and serves until SIGINT/SIGTERM (exit 0).\n' +
        'Examples:\n  loadgen serve --model demo-cnn --port 8000\n  loadgen serve --openai-stub --ttft-ms 20 --tpot-ms 5 --port 8001',
    )
    .action(async (options: ServeOptions) => {
      process.exitCode = await serveCommand(options, command.getOptionValueSource.bind(command));
    });
}

/**
 * Starts the server the options name, prints its URL and serves until a
 * signal. `sourceOf` tells options given on the command line from defaults
 * (commander's getOptionValueSource), so stub options given with --model are refused.
 */
export async function serveCommand(options: ServeOptions, sourceOf: (key: string) => string | undefined = () => undefined): Promise<number> {
  const stub = options.openaiStub === true;
  if (stub && options.model !== undefined) throw new SettingsError('--model', options.model, '--model and --openai-stub are two servers: give one of them.');
  if (!stub && options.model === undefined) {
    throw new SettingsError('--model', undefined, `give --model ${SERVABLE_MODELS.join('|')} (a KServe v2 model server) or --openai-stub (a token streamer).`);
  }
  if (!stub) {
    const given = OPENAI_STUB_CLI_KEYS.filter((key) => options[key] !== undefined && sourceOf(key) !== 'default');
    if (given.length > 0) {
      const flags = given.map(openAiStubFlag);
      throw new SettingsError(flags[0]!, options[given[0]!], `${flags.join(', ')} appl${flags.length === 1 ? 'ies' : 'y'} only with --openai-stub.`);
    }
  }
  if (stub && options.workers !== undefined) throw new SettingsError('--workers', options.workers, '--workers applies only with --model.');
  if (!stub && !(SERVABLE_MODELS as readonly string[]).includes(options.model!)) {
    throw new SettingsError('--model', options.model, `--model '${echo(options.model!)}' is not bundled: only ${SERVABLE_MODELS.join(', ')} can be served (use --openai-stub for an LLM endpoint).`);
  }
  const host = options.host ?? DEFAULT_SERVE_HOST;
  const port = options.port ?? DEFAULT_SERVE_PORT;
  const stubOptions = stub ? openAiStubOptionsFromCli(options, { host, port }) : undefined;
  const tokenizer = stub ? await openAiStubTokenizerFromCli(options) : undefined;
  if (tokenizer !== undefined) stubOptions!.tokenizer = tokenizer;
  let server: RunningServer;
  try {
    server = stub
      ? await startOpenAiStub(stubOptions!)
      : await startKServeServer({ model: options.model!, host, port, ...(options.workers !== undefined ? { workers: options.workers } : {}) });
  } catch (error) {
    throw listenError(error, host, port);
  }
  const what = stub
    ? `an OpenAI-compatible token streamer (ttft ${stubOptions!.ttftMs} ms, tpot ${stubOptions!.tpotMs} ms${tokenizer !== undefined ? `, the vocabulary of ${options.stubTokenizer!}` : ''})`
    : `${options.model} (KServe v2)`;
  process.stdout.write(`loadgen serve: ${what} at ${server.url}\n`);
  const signal = await new Promise<'SIGINT' | 'SIGTERM'>((resolveSignal) => {
    const onSignal = (name: 'SIGINT' | 'SIGTERM'): void => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      // A second signal while closing exits at once.
      process.once('SIGINT', () => process.exit(EXIT_SIGINT));
      process.once('SIGTERM', () => process.exit(EXIT_SIGTERM));
      resolveSignal(name);
    };
    const onInt = (): void => onSignal('SIGINT');
    const onTerm = (): void => onSignal('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
  });
  process.stderr.write(`loadgen serve: ${signal} received: closing\n`);
  await server.close();
  return EXIT_VALID;
}

/** A listen failure as bad input naming the option (exit 2); anything else unchanged. */
function listenError(error: unknown, host: string, port: number): unknown {
  // The stub wraps the listen error; its cause carries the code.
  const code = (error as NodeJS.ErrnoException)?.code ?? ((error as Error)?.cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') return new SettingsError('--port', port, `cannot listen on ${host}:${port}: the port is in use; choose another --port (0: any free port).`);
  if (code === 'EACCES') return new SettingsError('--port', port, `cannot listen on ${host}:${port}: permission denied; choose a --port above 1023 (0: any free port).`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new SettingsError('--host', host, `cannot listen on ${echo(host)}: not an address of this machine (${code}); e.g. --host 127.0.0.1 or ::1.`);
  }
  return error;
}
