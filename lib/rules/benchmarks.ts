/**
 * The closed-division benchmarks of the inference rules (seeds/000: the
 * Datacenter and Edge suite tables): which scenarios each suite requires.
 * The numbers a run is held to (durations, query counts, seeds, latency
 * bounds, sample counts) are not repeated here: they come from the built-in
 * mlperf.conf, as the reference's submission checker holds them.
 */
import type { Scenario } from '../types/settings.js';

/** A benchmark of the rules' suite tables, under its mlperf.conf model name. */
export interface Benchmark {
  /** The model name mlperf.conf uses (e.g. resnet50). */
  readonly model: string;
  /** The rules' name (e.g. Resnet50-v1.5). */
  readonly title: string;
  /** Scenarios the Datacenter suite requires; absent: not in that suite. */
  readonly datacenter?: readonly Scenario[];
  /** Scenarios the Edge suite requires; absent: not in that suite. */
  readonly edge?: readonly Scenario[];
}

/** seeds/000 "Each Datacenter / Edge benchmark requires the following scenarios". */
export const BENCHMARKS: readonly Benchmark[] = [
  { model: 'resnet50', title: 'Resnet50-v1.5', datacenter: ['Server', 'Offline'], edge: ['SingleStream', 'MultiStream', 'Offline'] },
  { model: 'retinanet', title: 'Retinanet', datacenter: ['Server', 'Offline'], edge: ['SingleStream', 'MultiStream', 'Offline'] },
  { model: '3d-unet', title: '3D UNET', datacenter: ['Offline'], edge: ['SingleStream', 'Offline'] },
  { model: 'bert', title: 'BERT', edge: ['SingleStream', 'Offline'] },
  { model: 'gptj', title: 'GPT-J', datacenter: ['Server', 'Offline'], edge: ['SingleStream', 'Offline'] },
  { model: 'llama2-70b', title: 'Llama2', datacenter: ['Server', 'Offline'] },
  { model: 'mixtral-8x7b', title: 'Mixtral-8x7B', datacenter: ['Server', 'Offline'] },
  { model: 'dlrm-v2', title: 'DLRMv2', datacenter: ['Server', 'Offline'] },
  { model: 'stable-diffusion-xl', title: 'SDXL', datacenter: ['Server', 'Offline'], edge: ['SingleStream', 'Offline'] },
];

/** The benchmark of a model name, if the rules' tables list it. */
export function benchmarkOf(model: string): Benchmark | undefined {
  return BENCHMARKS.find((b) => b.model === model);
}

/** Where a scenario is required for a benchmark: the suites that list it. */
export function suitesRequiring(b: Benchmark, scenario: Scenario): Array<'datacenter' | 'edge'> {
  const out: Array<'datacenter' | 'edge'> = [];
  if (b.datacenter?.includes(scenario)) out.push('datacenter');
  if (b.edge?.includes(scenario)) out.push('edge');
  return out;
}
