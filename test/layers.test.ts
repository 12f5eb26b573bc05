/**
 * lib/ is built in layers: each folder (and each top-level file) of lib/ has
 * one layer below, and every import runs downward or within its own layer.
 * Fails on an upward import, on a cycle between folders (members of one
 * layer may import each other, but not in a circle), and on a cycle between
 * files, inside a folder too. The graph counts `import type`, `export ...
 * from` and `import('...')` with a literal (test/import-graph.ts); each
 * failure lists every offender.
 */
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { repoRoot } from './helpers.js';
import { buildImportGraph, cycles, type ImportEdge } from './import-graph.js';

/**
 * The layers, bottom first. A member is a folder of lib/ ('net') or a
 * top-level file of lib/ ('errors.ts').
 * Members of one layer may import each other, but not in a circle.
 */
const LAYERS: ReadonlyArray<{ readonly members: readonly string[]; readonly holds: string }> = [
  {
    members: ['errors.ts', 'run-abort-signal.ts', 'abortable.ts', 'types'],
    holds: 'the error classes, the abort signal and untilAborted, and types/: the types every layer shares (settings, SUT, QSL, result, failure kinds)',
  },
  { members: ['native'], holds: 'the addon loader, its typed surface and the tables it exports (setting limits, enums)' },
  { members: ['settings'], holds: 'TestSettings: fields, validation, resolution, the messages that name a setting' },
  { members: ['config'], holds: 'mlperf.conf / user.conf parsing, provenance, audit.config' },
  { members: ['fs', 'platform', 'datasets', 'tokenizer'], holds: 'output directories and the names of the log files, the doctor probe, dataset readers, the tokenizer library' },
  { members: ['accuracy', 'power', 'rules'], holds: 'accuracy scorers, power sampling and energy, the submission rules checker' },
  { members: ['dispatch'], holds: 'how queries reach a JS SUT: wake, poll, worker threads, the drain, the active series' },
  { members: ['api'], holds: 'startTest and its checks, completions, results, the SUT report hooks' },
  { members: ['suts', 'net', 'demo', 'serve'], holds: 'SUTs: null SUTs, the network clients, the ONNX demo, the stub servers' },
  { members: ['report'], holds: 'the HTML report and the progress display' },
  { members: ['conformance', 'cli', 'bench'], holds: 'the conformance runner, the CLI commands, the overhead benchmark' },
  { members: ['cli.ts', 'index.ts'], holds: 'the entry points: the CLI binary and the package index' },
];

/** The member of a file: its top folder ('net' for lib/net/llm/sglang.ts), or the file itself ('errors.ts'). */
function memberOf(file: string): string {
  const slash = file.indexOf('/');
  return slash >= 0 ? file.slice(0, slash) : file;
}

function layerIndex(): Map<string, number> {
  const index = new Map<string, number>();
  LAYERS.forEach((layer, i) => {
    for (const m of layer.members) {
      if (index.has(m)) throw new Error(`${m} is in two layers`);
      index.set(m, i);
    }
  });
  return index;
}

const graph = buildImportGraph(join(repoRoot, 'lib'));
const layerOf = layerIndex();
const edgeName = (e: ImportEdge): string => `${e.from} -> ${e.to}`;

/** Fails listing every offender, one a line (a diff of long arrays would be cut short). */
function report(what: string, found: readonly string[]): void {
  if (found.length > 0) expect.fail(`${found.length} ${what}:\n  ${found.join('\n  ')}`);
}

describe('lib/ layers', () => {
  it('places every folder and top-level file of lib/ in a layer', () => {
    const unplaced = [...new Set(graph.files.map(memberOf))].filter((m) => !layerOf.has(m)).sort();
    expect(unplaced, 'add each to LAYERS in test/layers.test.ts').toEqual([]);
  });

  it('has no upward import', () => {
    const upward = new Set<string>();
    for (const e of graph.edges) {
      const from = layerOf.get(memberOf(e.from));
      const to = layerOf.get(memberOf(e.to));
      if (from !== undefined && to !== undefined && to > from) upward.add(edgeName(e));
    }
    report('upward imports (move what is imported down, or pass it in)', [...upward].sort());
  });

  it('has no cycle between folders', () => {
    const members = [...new Set(graph.files.map(memberOf))];
    const between = graph.edges
      .filter((e) => memberOf(e.from) !== memberOf(e.to))
      .map((e) => [memberOf(e.from), memberOf(e.to)] as const);
    report('folder cycles', cycles(members, between).map((c) => c.join(' ')));
  });

  it('has no cycle between files', () => {
    const found = cycles(
      graph.files,
      graph.edges.map((e) => [e.from, e.to] as const),
    ).map((c) => c.join(' '));
    report('file cycles', found);
  });
});
