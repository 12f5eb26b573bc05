/**
 * `loadgen accuracy LOG`: scores an accuracy log as MLCommons' evaluators
 * do and, with --benchmark, checks the rules' targets. Exit 0 when every
 * target passes (or none was asked for), 1 when one fails or cannot be
 * scored, 2 for input that does not fit (log, data set, tokenizer, options).
 */
import { Option, type Command } from 'commander';

import { ACCURACY_DTYPES } from '../datasets/accuracy-ids.js';
import { formatAccuracyReport } from '../accuracy/format.js';
import { scoreAccuracy, type AccuracyOptions, type AccuracyTokenizer } from '../accuracy/score.js';
import { ACCURACY_BENCHMARK_NAMES } from '../accuracy/targets.js';
import { loadTokenizer } from '../tokenizer/index.js';
import { EXIT_INVALID, EXIT_VALID } from './exit-codes.js';
import { choiceOption, integerInRange } from './options.js';

interface AccuracyCommandOptions {
  dataset?: string;
  tokenizer?: string;
  accuracyDtype?: 'int32' | 'int64' | 'float32';
  benchmark?: string;
  json?: boolean;
  punkt?: string;
  targetField?: string;
  labels?: string;
  labelOffset?: number;
  logData?: 'ids' | 'text';
  cleanUpTokenizationSpaces?: boolean;
}

/** Adds `loadgen accuracy`. */
export function registerAccuracyCommand(program: Command): void {
  program
    .command('accuracy')
    .description("score an accuracy log (mlperf_log_accuracy.json) as MLCommons' evaluators do, and check the rules' targets")
    .argument('<log>', 'mlperf_log_accuracy.json, or the log folder holding it')
    .option('--dataset <file>', 'the data set with the reference outputs (cnn_eval.json, JSONL or Parquet; a .pkl: convert it with the command the error prints)')
    .option('--tokenizer <file>', "the model's tokenizer.json, to decode token ids (and count tokens of a text log)")
    .addOption(choiceOption('--accuracy-dtype <dtype>', 'how the log stores ids (default: as the benchmark\'s reference harness writes them: int64 for gptj, else int32; float32 for --labels)', [...ACCURACY_DTYPES, 'float32']))
    .addOption(new Option('--benchmark <name>', `score as this benchmark's MLCommons evaluator and check its targets: ${ACCURACY_BENCHMARK_NAMES.join(', ')}`))
    .option('--json', 'print one JSON document (metrics, targets, verdicts, counts, dtype, sentence splitter)')
    .option('--punkt <dir>', "NLTK's English punkt_tab folder for the sentence split before ROUGE-Lsum (default: where NLTK keeps it, else a built-in approximation)")
    .option('--target-field <name>', "the data set's reference field (default: the benchmark's, else 'output')")
    .option('--labels <file>', "classification: a label file ('name label' per line, as ImageNet's val_map.txt) for top-1")
    .addOption(new Option('--label-offset <n>', "classification: subtracted from the log's class (1 for a model with a background class)").argParser(integerInRange('--label-offset', -1000, 1000)))
    .addOption(choiceOption('--log-data <kind>', "read the log's data as token ids or as UTF-8 text (default: detected)", ['ids', 'text']))
    .option('--clean-up-tokenization-spaces', "decode as Hugging Face does with clean_up_tokenization_spaces=True (default: the value in tokenizer_config.json beside --tokenizer, else off)")
    .option('--no-clean-up-tokenization-spaces', 'decode without that clean-up')
    .addHelpText(
      'after',
      '\nExit status: 0 all targets met (or no --benchmark), 1 a target missed or not scored, 2 bad input.\n' +
        'Examples:\n  npx loadgen accuracy out/accuracy --dataset cnn_eval.json --tokenizer tokenizer.json --benchmark llama3_1-8b\n' +
        '  npx loadgen accuracy mlperf_log_accuracy.json --dataset open_orca.parquet --tokenizer tokenizer.json --benchmark llama2-70b --json\n' +
        '  npx loadgen accuracy out/resnet --labels val_map.txt --benchmark resnet50',
    )
    .action(async (log: string, options: AccuracyCommandOptions) => {
      process.exitCode = await accuracyCommand(log, options);
    });
}

/** The tokenizer.json loaded (its tokenizer_config.json beside it decides the decode's clean-up), as scoring uses it. */
async function accuracyTokenizer(file: string): Promise<AccuracyTokenizer> {
  const tokenizer = await loadTokenizer(file);
  return {
    vocabularySize: tokenizer.vocabSize,
    cleanUpTokenizationSpaces: tokenizer.cleanUpTokenizationSpaces,
    decode: (ids, options) => tokenizer.decode(ids, options),
    // Generated tokens carry no BOS: count the text's own tokens.
    encode: (text) => tokenizer.encode(text, { addSpecialTokens: false }),
  };
}

async function accuracyCommand(log: string, options: AccuracyCommandOptions): Promise<number> {
  const scoring: AccuracyOptions = {
    log,
    ...(options.dataset !== undefined ? { dataset: options.dataset } : {}),
    ...(options.labels !== undefined ? { labels: options.labels } : {}),
    ...(options.tokenizer !== undefined ? { tokenizer: await accuracyTokenizer(options.tokenizer) } : {}),
    ...(options.cleanUpTokenizationSpaces !== undefined ? { cleanUpTokenizationSpaces: options.cleanUpTokenizationSpaces } : {}),
    ...(options.accuracyDtype !== undefined ? { accuracyDtype: options.accuracyDtype } : {}),
    ...(options.benchmark !== undefined ? { benchmark: options.benchmark } : {}),
    ...(options.punkt !== undefined ? { punkt: options.punkt } : {}),
    ...(options.targetField !== undefined ? { targetField: options.targetField } : {}),
    ...(options.labelOffset !== undefined ? { labelOffset: options.labelOffset } : {}),
    ...(options.logData !== undefined ? { logData: options.logData === 'ids' ? 'token-ids' : 'text' } : {}),
  };
  const report = await scoreAccuracy(scoring);
  process.stdout.write(options.json === true ? `${JSON.stringify(report, null, 2)}\n` : `${formatAccuracyReport(report)}\n`);
  return report.passed === false ? EXIT_INVALID : EXIT_VALID;
}
