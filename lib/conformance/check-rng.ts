/**
 * rng_primitives.json: the MT19937 engine and the libstdc++ distributions
 * (spec/20), section by section.
 */
import { firstDifference, firstOf } from './compare.js';
import { conformance, lengthOf, seedOf, type Json, type Runner } from './case-runner.js';

const META_KEYS = new Set(['reference', 'toolchain', 'file_kind', 'set', 'description', 'notes']);

export async function checkRngPrimitives(r: Runner, file: string, json: Json): Promise<void> {
  for (const [section, value] of Object.entries(json)) {
    if (META_KEYS.has(section)) continue;
    if (section === 'mt19937_default_constructed_first') {
      await r.check(file, section, () => {
        const n = lengthOf(value);
        return firstDifference(value, conformance().mt19937Outputs(5489n, n), section);
      });
      continue;
    }
    if (!Array.isArray(value)) {
      await r.check(file, section, () => `unknown section '${section}' (not checked)`);
      continue;
    }
    for (let i = 0; i < value.length; i++) {
      const row = value[i] as Json;
      const id = `${section}[${i}]`;
      await r.check(file, id, () => checkRngRow(section, row));
    }
  }
}

function checkRngRow(section: string, row: Json): string | undefined {
  const c = conformance();
  switch (section) {
    case 'mt19937_raw': {
      const count = Math.max(lengthOf(row.first), row.output_10000 !== undefined ? 10000 : 0);
      const out = c.mt19937Outputs(seedOf(row.seed), count);
      return firstOf(
        () => firstDifference(row.first, out.subarray(0, lengthOf(row.first)), 'first'),
        () => (row.output_10000 === undefined ? undefined : firstDifference(row.output_10000, out[9999], 'output_10000')),
      );
    }
    case 'uniform_real_0_1': {
      const got = c.uniformReal(seedOf(row.seed), lengthOf(row.values));
      return firstOf(
        () => firstDifference(row.values, got.values, 'values'),
        () => (row.engine_draws === undefined ? undefined : firstDifference(row.engine_draws, got.engineDraws, 'engine_draws')),
      );
    }
    case 'server_interarrival_ns': {
      const nd = row.delta_ns === undefined ? 0 : lengthOf(row.delta_ns);
      const ne = row.exp_seconds === undefined ? 0 : lengthOf(row.exp_seconds);
      const got = c.serverInterarrival(seedOf(row.seed), row.qps as number, Math.max(nd, ne));
      return firstOf(
        () => (nd === 0 ? undefined : firstDifference(row.delta_ns, got.deltaNs.subarray(0, nd), 'delta_ns')),
        () => (ne === 0 ? undefined : firstDifference(row.exp_seconds, got.expSeconds.subarray(0, ne), 'exp_seconds')),
      );
    }
    case 'fixed_period_ns':
      return firstDifference(row.period_ns, c.fixedPeriodNs(row.qps as number), 'period_ns');
    case 'uniform_int': {
      const got = c.uniformInt(seedOf(row.seed), row.n as number, lengthOf(row.values));
      return firstOf(
        () => firstDifference(row.values, got.values, 'values'),
        () => (row.engine_draws === undefined ? undefined : firstDifference(row.engine_draws, got.engineDraws, 'engine_draws')),
      );
    }
    case 'shuffle': {
      const got = c.shuffle(seedOf(row.seed), row.n as number);
      return firstOf(
        () => firstDifference(row.result, got.result, 'result'),
        () => (row.engine_draws === undefined ? undefined : firstDifference(row.engine_draws, got.engineDraws, 'engine_draws')),
        () =>
          row.next_engine_output === undefined ? undefined : firstDifference(row.next_engine_output, got.nextEngineOutput, 'next_engine_output'),
      );
    }
    default:
      return `unknown section '${section}' (not checked)`;
  }
}
