/**
 * `loadgen serve`: a server to benchmark on any machine, on loopback by
 * default. `--model demo-cnn` serves the bundled model through the KServe v2
 * REST protocol (lib/serve/kserve-server.ts); `--openai-stub` a deterministic
 * OpenAI-compatible token streamer (lib/serve/openai-stub.ts). Prints one
 * line with the URL once listening, and with --ready-file writes the URL to
 * a file then (atomically: a script waits for the file); SIGINT/SIGTERM
 * close it (exit 0), and so does the exit of the npm process that started
 * it (`npx loadgen serve`: lib/cli/parent-watch.ts).
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { Command, InvalidArgumentError } from 'commander';

import { addOpenAiStubOptions, OPENAI_STUB_CLI_KEYS, openAiStubFlag, openAiStubOptionsFromCli, openAiStubTokenizerFromCli, type OpenAiStubCliValues } from './openai-stub-options.js';

import { SettingsError } from '../errors.js';
import { echo } from '../settings/messages.js';
import { DEFAULT_SERVE_HOST, DEFAULT_SERVE_PORT, SERVABLE_MODELS, startKServeServer } from '../serve/kserve-server.js';
import { startOpenAiStub } from '../serve/openai-stub.js';
import type { RunningServer } from '../serve/server.js';
import { EXIT_SIGINT, EXIT_SIGTERM, EXIT_VALID } from './exit-codes.js';
import { positiveInteger } from './options.js';
import { watchNpmAncestor, type ParentWatch } from './parent-watch.js';

export interface ServeOptions extends OpenAiStubCliValues {
  model?: string;
  openaiStub?: boolean;
  host?: string;
  port?: number;
  workers?: number;
  readyFile?: string;
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
    .option('--workers <n>', '--model: onnxruntime worker threads (default: one per core, up to 4)', positiveInteger('--workers'))
    .option('--ready-file <file>', 'once listening, write the URL (one line) to this file, atomically, for a script to wait for; removed on exit');
  addOpenAiStubOptions(command)
    .addHelpText(
      'after',
      '\nPrints one line with the URL once listening (and writes it to --ready-file then) and serves until\n' +
        'SIGINT/SIGTERM (exit 0). Started through npm (npx loadgen serve), it also exits when that npm process\n' +
        'does: npm exec does not pass a SIGTERM on to it.\n' +
        'Examples:\n  npx loadgen serve --model demo-cnn --port 8000\n  npx loadgen serve --openai-stub --ttft-ms 20 --tpot-ms 5 --port 8001 --ready-file stub.url',
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
  // Signals are handled from before the URL is announced: a script may stop
  // the server the moment it reads the URL.
  let watch: ParentWatch | undefined;
  const stopped = new Promise<string>((resolveStop) => {
    const stop = (why: string): void => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      watch?.stop();
      // A second signal while closing exits at once.
      process.once('SIGINT', () => process.exit(EXIT_SIGINT));
      process.once('SIGTERM', () => process.exit(EXIT_SIGTERM));
      resolveStop(why);
    };
    const onInt = (): void => stop('SIGINT received');
    const onTerm = (): void => stop('SIGTERM received');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    watch = watchNpmAncestor((gone) => stop(`${gone.what} exited`));
  });
  let readyFile: string | undefined;
  if (options.readyFile !== undefined) {
    try {
      readyFile = writeReadyFile(options.readyFile, server.url);
    } catch (error) {
      watch?.stop();
      await server.close();
      throw error;
    }
  }
  process.stdout.write(`loadgen serve: ${what} at ${server.url}\n`);
  const reason = await stopped;
  process.stderr.write(`loadgen serve: ${reason}: closing\n`);
  try {
    await server.close();
  } finally {
    if (readyFile !== undefined) removeReadyFile(readyFile, server.url);
  }
  return EXIT_VALID;
}

/**
 * Writes `${url}\n` to `file` through a temporary file beside it and a
 * rename, so a reader never sees it part-written. Returns the absolute path.
 */
function writeReadyFile(file: string, url: string): string {
  const path = resolve(file);
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${url}\n`);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new SettingsError('--ready-file', file, `--ready-file ${echo(file)}: cannot write it: ${(error as Error).message}`);
  }
  return path;
}

/** Removes the ready file if it still holds this server's URL (another server may have written it since). */
function removeReadyFile(path: string, url: string): void {
  try {
    if (readFileSync(path, 'utf8') === `${url}\n`) rmSync(path, { force: true });
  } catch {
    // Gone already, or unreadable: nothing of ours to remove.
  }
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
