/**
 * The accuracy targets of the rules, per benchmark, and how each benchmark
 * is scored. The inference rules (seeds/000, the Datacenter and Edge suite
 * tables) give GPT-J, Llama2-70B, Mixtral-8x7B and ResNet-50; they do not
 * list Llama 3.1 8B/405B, DeepSeek-R1 or gpt-oss-120b, whose targets come
 * from MLCommons' submission checker (tools/submission/submission_checker/
 * constants.py, "accuracy-target" / "accuracy-upper-limit"), and neither
 * does the seed give the upper bound on Llama2-70B's tokens per sample,
 * which the checker also holds. Each target names its source.
 *
 * A threshold is computed as the checker computes it (reference x fraction
 * in double precision) and compared as it compares: value >= threshold for
 * a floor, value <= limit for a ceiling.
 */
import { SettingsError } from '../errors.js';

/** How the log of a benchmark is scored (after MLCommons' evaluator of that benchmark). */
export type ScorerKind =
  /** ROUGE 1/2/L/Lsum, gen_len, gen_num (GPT-J, Llama 3.1 8B: evaluation.py). */
  | 'rouge'
  /** The same plus gen_tok_len and tokens_per_sample (Llama2-70B: evaluate-accuracy.py). */
  | 'rouge-tokens'
  /** OpenOrca ROUGE, GSM8K numeric answers, MBXP (not scored) by the `dataset` field (Mixtral). */
  | 'mixtral'
  /** Per-sample metric field: rouge (rougeL), niah_em, qa_em (Llama 3.1 405B). */
  | 'llama3_1-405b'
  /** Exact match needs graders that execute code or check math: only tokens per sample (DeepSeek-R1, gpt-oss-120b). */
  | 'tokens-only'
  /** Top-1 of a classification log against a label file (ImageNet's val_map.txt). */
  | 'top1';

export const SEED_SOURCE = 'rules (seeds/000 suite tables)';
export const CHECKER_SOURCE = 'MLCommons submission checker (constants.py, v6.0)';

/** One target a metric must meet. */
export interface AccuracyTarget {
  /** The metric's name as MLCommons prints it (e.g. 'rouge1', 'tokens_per_sample', 'gsm8k'). */
  readonly metric: string;
  /** 'min': value >= threshold; 'max': value <= threshold. */
  readonly bound: 'min' | 'max';
  /** The reference figure (e.g. 44.4312). */
  readonly reference: number;
  /** The share of it (0.99, 0.999, 0.9, 1.1). */
  readonly fraction: number;
  /** reference x fraction, as the checker computes it. */
  readonly threshold: number;
  /** Where the target comes from. */
  readonly source: string;
  /** Why this metric cannot be scored here, when it cannot (such a target is never reported as met). */
  readonly notScored?: string;
}

/** A benchmark (one accuracy variant) and how to score it. */
export interface AccuracyBenchmark {
  /** e.g. 'llama2-70b-99.9'. */
  readonly name: string;
  /** The mlperf.conf model name (e.g. 'llama2-70b'). */
  readonly model: string;
  readonly scorer: ScorerKind;
  /** The data set's reference field (MLCommons' name for it). */
  readonly targetField: string;
  /** Further data-set fields the scorer reads (e.g. Mixtral's 'dataset'). */
  readonly fields: readonly string[];
  readonly targets: readonly AccuracyTarget[];
  /** Sibling variants of the same model (e.g. the 99.9 % one of a 99 % name). */
  readonly variants: readonly string[];
}

function target(metric: string, bound: 'min' | 'max', reference: number, fraction: number, source: string, notScored?: string): AccuracyTarget {
  return { metric, bound, reference, fraction, threshold: reference * fraction, source, ...(notScored !== undefined ? { notScored } : {}) };
}

const rougeTargets = (fraction: number, source: string, refs: Record<string, number>): AccuracyTarget[] =>
  Object.entries(refs).map(([metric, reference]) => target(metric, 'min', reference, fraction, source));

const GPTJ_ROUGE = { rouge1: 42.9865, rouge2: 20.1235, rougeL: 29.9881 };
const LLAMA2_ROUGE = { rouge1: 44.4312, rouge2: 22.0352, rougeL: 28.6162 };
const LLAMA3_8B_ROUGE = { rouge1: 38.7792, rouge2: 15.9075, rougeL: 24.4957, rougeLsum: 35.793 };
const LLAMA3_8B_EDGE_ROUGE = { rouge1: 39.06, rouge2: 16.1147, rougeL: 24.6375, rougeLsum: 36.124 };
const CODE_EXECUTION = 'needs its graders to run generated code and check math answers (MLCommons evaluator), which loadgen does not do';

function gptj(fraction: number): AccuracyTarget[] {
  return [...rougeTargets(fraction, SEED_SOURCE, GPTJ_ROUGE), target('gen_len', 'min', 4016878, 0.9, SEED_SOURCE)];
}

function llama2(fraction: number): AccuracyTarget[] {
  return [
    ...rougeTargets(fraction, SEED_SOURCE, LLAMA2_ROUGE),
    target('tokens_per_sample', 'min', 294.45, 0.9, SEED_SOURCE),
    target('tokens_per_sample', 'max', 294.45, 1.1, CHECKER_SOURCE),
  ];
}

const TABLE: readonly AccuracyBenchmark[] = [
  { name: 'gptj-99', model: 'gptj', scorer: 'rouge', targetField: 'output', fields: [], targets: gptj(0.99), variants: ['gptj-99.9'] },
  { name: 'gptj-99.9', model: 'gptj', scorer: 'rouge', targetField: 'output', fields: [], targets: gptj(0.999), variants: ['gptj-99'] },
  { name: 'llama2-70b-99', model: 'llama2-70b', scorer: 'rouge-tokens', targetField: 'output', fields: [], targets: llama2(0.99), variants: ['llama2-70b-99.9'] },
  { name: 'llama2-70b-99.9', model: 'llama2-70b', scorer: 'rouge-tokens', targetField: 'output', fields: [], targets: llama2(0.999), variants: ['llama2-70b-99'] },
  {
    name: 'mixtral-8x7b', model: 'mixtral-8x7b', scorer: 'mixtral', targetField: 'gt_output', fields: ['dataset'], variants: [],
    targets: [
      ...rougeTargets(0.99, SEED_SOURCE, { rouge1: 45.5989, rouge2: 23.3526, rougeL: 30.4608 }),
      target('gsm8k', 'min', 73.66, 0.99, SEED_SOURCE),
      target('mbxp', 'min', 60.16, 0.99, SEED_SOURCE, 'MBXP accuracy runs the generated code in several languages (evaluate_mbxp.py), which loadgen does not do'),
      target('tokens_per_sample', 'min', 144.84, 0.9, SEED_SOURCE),
      target('tokens_per_sample', 'max', 144.84, 1.1, SEED_SOURCE),
    ],
  },
  {
    name: 'llama3_1-8b', model: 'llama3_1-8b', scorer: 'rouge', targetField: 'output', fields: [], variants: [],
    targets: [...rougeTargets(0.99, CHECKER_SOURCE, LLAMA3_8B_ROUGE), target('gen_len', 'min', 8167644, 0.9, CHECKER_SOURCE), target('gen_len', 'max', 8167644, 1.1, CHECKER_SOURCE)],
  },
  {
    name: 'llama3_1-8b-edge', model: 'llama3_1-8b-edge', scorer: 'rouge', targetField: 'output', fields: [], variants: [],
    targets: [...rougeTargets(0.99, CHECKER_SOURCE, LLAMA3_8B_EDGE_ROUGE), target('gen_len', 'min', 3051113, 0.9, CHECKER_SOURCE), target('gen_len', 'max', 3051113, 1.1, CHECKER_SOURCE)],
  },
  {
    name: 'llama3_1-405b', model: 'llama3_1-405b', scorer: 'llama3_1-405b', targetField: 'gt_output', fields: ['metric'], variants: [],
    targets: [
      target('rougeL', 'min', 21.6666, 0.99, CHECKER_SOURCE),
      target('exact_match', 'min', 90.1335, 0.99, CHECKER_SOURCE),
      target('tokens_per_sample', 'min', 684.68, 0.9, CHECKER_SOURCE),
      target('tokens_per_sample', 'max', 684.68, 1.1, CHECKER_SOURCE),
    ],
  },
  {
    name: 'deepseek-r1', model: 'deepseek-r1', scorer: 'tokens-only', targetField: 'gt_output', fields: [], variants: [],
    targets: [
      target('exact_match', 'min', 81.3582, 0.99, CHECKER_SOURCE, CODE_EXECUTION),
      target('tokens_per_sample', 'min', 3886.2274, 0.9, CHECKER_SOURCE),
      target('tokens_per_sample', 'max', 3886.2274, 1.1, CHECKER_SOURCE),
    ],
  },
  {
    name: 'gpt-oss-120b', model: 'gpt-oss-120b', scorer: 'tokens-only', targetField: 'ground_truth', fields: [], variants: [],
    targets: [
      target('exact_match', 'min', 83.13, 0.99, CHECKER_SOURCE, CODE_EXECUTION),
      // The checker marks 9999 a placeholder; it is what submissions are held to.
      target('tokens_per_sample', 'max', 9999, 1.1, CHECKER_SOURCE),
    ],
  },
  { name: 'resnet50', model: 'resnet50', scorer: 'top1', targetField: '', fields: [], variants: [], targets: [target('accuracy', 'min', 76.46, 0.99, SEED_SOURCE)] },
];

/** Names accepted for a benchmark besides the table's (the mlperf.conf model name picks the 99 % variant). */
const ALIASES: Readonly<Record<string, string>> = {
  gptj: 'gptj-99',
  'llama2-70b': 'llama2-70b-99',
  'llama3.1-8b': 'llama3_1-8b',
  'llama3.1-8b-edge': 'llama3_1-8b-edge',
  'llama3.1-405b': 'llama3_1-405b',
  resnet: 'resnet50',
};

/** Every benchmark name `--benchmark` accepts. */
export const ACCURACY_BENCHMARK_NAMES: readonly string[] = [...TABLE.map((b) => b.name), ...Object.keys(ALIASES)];

/** The accuracy table (every variant). */
export const ACCURACY_BENCHMARKS: readonly AccuracyBenchmark[] = TABLE;

/**
 * The benchmark of a name: a table name, an alias, or either with an
 * '-interactive' suffix (same accuracy as its base). A SettingsError lists
 * the names allowed.
 */
export function accuracyBenchmark(name: string): AccuracyBenchmark {
  const interactive = /^(.*?)-interactive(-99(?:\.9)?)?$/.exec(name);
  const base = interactive !== null ? `${interactive[1]}${interactive[2] ?? ''}` : name;
  const resolved = ALIASES[base] ?? base;
  const found = TABLE.find((b) => b.name === resolved);
  if (found === undefined) {
    throw new SettingsError('--benchmark', name, `--benchmark ${name}: not a benchmark with accuracy targets; one of ${ACCURACY_BENCHMARK_NAMES.join(', ')} (an -interactive suffix is accepted)`);
  }
  return found;
}
