// The import graph of lib/**/*.ts, for test/layers.test.ts: every static
// `import` and `export ... from` (type-only ones included), `import x =
// require('...')`, and `import('...')` with a literal specifier, in code or in
// a type position. Only imports of other files in lib/ are edges; packages and
// node: builtins are not. Read with the TypeScript parser, so imports inside
// comments and strings are not counted.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  /** The importing file, relative to lib/ with '/' separators ('net/client.ts'). */
  readonly from: string;
  /** The imported file, the same way. */
  readonly to: string;
  /** Only types cross this import (`import type`, or every name is `type`). */
  readonly typeOnly: boolean;
}

export interface ImportGraph {
  /** Every .ts file under lib/, sorted. */
  readonly files: readonly string[];
  readonly edges: readonly ImportEdge[];
}

function listTs(dir: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) listTs(path, out);
    else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
}

const toKey = (libDir: string, path: string): string => relative(libDir, path).split(sep).join('/');

/** './x.js' from lib/a/b.ts -> lib/a/x.ts, when that file exists. */
function resolveSpecifier(fromPath: string, specifier: string, known: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(fromPath), specifier);
  const candidates = [base.replace(/\.(m|c)?js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((c) => known.has(c));
}

function typeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (clause === undefined) return false; // `import './x.js'`: run for its effects
  if (clause.isTypeOnly) return true;
  if (clause.name !== undefined) return false;
  const bindings = clause.namedBindings;
  if (bindings === undefined || ts.isNamespaceImport(bindings)) return false;
  return bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

function typeOnlyExport(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  if (clause === undefined || !ts.isNamedExports(clause)) return false;
  return clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
}

export function buildImportGraph(libDir: string): ImportGraph {
  const paths: string[] = [];
  listTs(libDir, paths);
  paths.sort();
  const known = new Set(paths);
  const edges: ImportEdge[] = [];
  for (const path of paths) {
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const add = (specifier: string, typeOnly: boolean): void => {
      const target = resolveSpecifier(path, specifier, known);
      if (target !== undefined) edges.push({ from: toKey(libDir, path), to: toKey(libDir, target), typeOnly });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        add(node.moduleSpecifier.text, typeOnlyImport(node));
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
        add(node.moduleSpecifier.text, typeOnlyExport(node));
      } else if (
        ts.isImportEqualsDeclaration(node) &&
        ts.isExternalModuleReference(node.moduleReference) &&
        ts.isStringLiteral(node.moduleReference.expression)
      ) {
        add(node.moduleReference.expression.text, node.isTypeOnly);
      } else if (ts.isImportTypeNode(node)) {
        // `import('./x.js').Name` in a type position
        const arg = node.argument;
        if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) add(arg.literal.text, true);
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments.length > 0 &&
        ts.isStringLiteralLike(node.arguments[0]!)
      ) {
        add((node.arguments[0] as ts.StringLiteralLike).text, false);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { files: paths.map((p) => toKey(libDir, p)), edges };
}

/**
 * Strongly connected components with more than one member (or a member that
 * imports itself), each sorted, the list sorted by its first member. Tarjan's
 * algorithm, iterative.
 */
export function cycles(nodes: readonly string[], edges: ReadonlyArray<readonly [string, string]>): string[][] {
  const next = new Map<string, string[]>(nodes.map((n) => [n, []]));
  const selfLoop = new Set<string>();
  for (const [a, b] of edges) {
    if (!next.has(a)) next.set(a, []);
    if (!next.has(b)) next.set(b, []);
    if (a === b) selfLoop.add(a);
    next.get(a)!.push(b);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  for (const root of next.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: root, i: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const succ = next.get(frame.node)!;
      if (frame.i < succ.length) {
        const w = succ[frame.i++]!;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(w)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== frame.node);
        if (component.length > 1 || selfLoop.has(frame.node)) found.push(component.sort());
      }
    }
  }
  return found.sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0));
}
