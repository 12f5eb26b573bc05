#!/usr/bin/env node
// Packed-tarball test (part of `npm test`): what a user gets from the registry.
//
//  1. `npm run prebuild` when prebuilds/<platform>-<arch>/loadgen.napi.node is
//     missing or older than the native sources; on linux-x64, a
//     prebuilds/linux-arm64/ (npm run prebuild:arm64) older than them fails
//     (it would ship stale), and one that is present must be in the tarball
//     and be what node-gyp-build picks for arm64 (step 4);
//  2. `npm pack` into a temporary directory; the file list must hold the
//     prebuild, dist (JS + .d.ts), the native sources and the install scripts,
//     and nothing from test/, benchmarks/ or source maps;
//  3. an empty temporary project installs the tarball with a PATH that has
//     node/npm/npx and a shell but no compiler, make, ninja or cmake (checked);
//  4. the installed addon is the prebuild (nothing was built from source);
//  5. `npx loadgen run --sut null --scenario Offline ...` exits 0 and writes a
//     VALID mlperf_log_summary.txt;
//  6. an ESM script imports { startTest, createNullSut } from 'loadgen' and
//     runs a short test;
//  7. `tsc --noEmit` (the repository's typescript) type-checks a .ts file
//     against the installed package's types (exports "types"); the TypeScript
//     examples of README.md and docs/*.md compile under --strict as shown, and the public
//     declarations resolve without @types/node;
//  8. the install step with a build from source forced and no compiler says
//     what to install and exits non-zero;
//  9. the demo (`npx loadgen run --set min_duration_ms=500 --quiet --outdir demo`,
//     no --sut), once the package has one.
//
// LOADGEN_PACK_KEEP=1 keeps the temporary directory.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const prebuild = join(root, 'prebuilds', `${process.platform}-${process.arch}`, 'loadgen.napi.node');
// The cross-compiled arm64 prebuild ships beside linux-x64 when it has been built.
const arm64Prebuild = join(root, 'prebuilds', 'linux-arm64', 'loadgen.napi.node');
const withArm64 = process.platform === 'linux' && process.arch === 'x64' && existsSync(arm64Prebuild);
const started = Date.now();
let passed = 0;
let failed = 0;

function step(name, fn) {
  const t0 = Date.now();
  try {
    const note = fn();
    passed++;
    console.log(`ok   ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)${note ? `: ${note}` : ''}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err instanceof Error ? err.message : err}`);
    throw err;
  }
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  return r;
}

function mustRun(cmd, args, opts = {}) {
  const r = run(cmd, args, opts);
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}\n${tail(r.stdout)}\n${tail(r.stderr)}`);
  }
  return r;
}

function tail(text, lines = 40) {
  return (text ?? '').trimEnd().split('\n').slice(-lines).join('\n');
}

function newestMtime(dir, filter) {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isFile() && filter(name)) newest = Math.max(newest, st.mtimeMs);
  }
  return newest;
}

function findFiles(dir, name) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((p) => p.split(/[/\\]/).pop() === name)
    .map((p) => join(dir, p));
}

const work = mkdtempSync(join(tmpdir(), 'loadgen-pack-'));
const keep = process.env.LOADGEN_PACK_KEEP === '1';
let exitCode = 0;
try {
  main();
} catch {
  exitCode = 1;
} finally {
  if (keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
  console.log(`pack-test: ${passed} passed, ${failed} failed (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  process.exit(exitCode);
}

function main() {
  // -- 1. prebuild ---------------------------------------------------------
  step('prebuild present and current', () => {
    const sources = Math.max(
      newestMtime(join(root, 'native'), (n) => /\.(cc|h|in)$/.test(n) || n === 'CMakeLists.txt'),
      newestMtime(join(root, 'bindings'), (n) => /\.(cc|h)$/.test(n)),
      statSync(join(root, 'CMakeLists.txt')).mtimeMs,
    );
    if (withArm64 && statSync(arm64Prebuild).mtimeMs < sources) {
      throw new Error(`${relative(root, arm64Prebuild)} is older than the native sources: npm run prebuild:arm64 (or delete it)`);
    }
    if (existsSync(prebuild) && statSync(prebuild).mtimeMs >= sources) return `up to date${withArm64 ? ', with linux-arm64' : ''}`;
    mustRun('npm', ['run', 'prebuild'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    if (!existsSync(prebuild)) throw new Error(`npm run prebuild did not produce ${relative(root, prebuild)}`);
    return `built ${relative(root, prebuild)}`;
  });

  // -- 2. npm pack -----------------------------------------------------------
  const packDir = join(work, 'pack');
  mkdirSync(packDir);
  let tarball;
  let packSummary;
  step('npm pack: file list', () => {
    const r = mustRun('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: root });
    const info = JSON.parse(r.stdout.slice(r.stdout.search(/^\[/m)))[0];
    tarball = join(packDir, info.filename);
    const files = info.files.map((f) => f.path);
    const required = [
      `prebuilds/${process.platform}-${process.arch}/loadgen.napi.node`,
      ...(withArm64 ? ['prebuilds/linux-arm64/loadgen.napi.node'] : []),
      'cmake/portable_link.cmake',
      'cmake/version_info.cmake',
      'bindings/glibc_compat.cc',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cli.js',
      'scripts/install.mjs',
      'scripts/build-native.mjs',
      'CMakeLists.txt',
      'native/CMakeLists.txt',
      'native/session.cc',
      'native/version_info.cc.in',
      'bindings/addon.cc',
      'package.json',
      'README.md',
      'docs/getting-started.md',
      'docs/report.png',
    ];
    const missing = required.filter((f) => !files.includes(f));
    if (missing.length) throw new Error(`missing from the tarball: ${missing.join(', ')}`);
    const unwanted = files.filter(
      (f) =>
        /^(test|benchmarks|build|out|node_modules|lib)\//.test(f) || /^native\/test\//.test(f) || f.endsWith('.map') ||
        // The conformance runner is a development tool (npm run conformance from a checkout).
        /^dist\/conformance\//.test(f),
    );
    if (unwanted.length) throw new Error(`should not be in the tarball: ${unwanted.slice(0, 10).join(', ')}`);
    // dist/ is not cleaned by tsc: an output whose lib/ source is gone would ship.
    const stale = files.filter(
      (f) => /^dist\/.+\.js$/.test(f) && !existsSync(join(root, 'lib', f.slice(5).replace(/\.js$/, '.ts'))),
    );
    if (stale.length) console.log(`warn: dist files without a lib/ source (stale? rm -rf dist && npm run build:ts): ${stale.join(', ')}`);
    const groups = {};
    for (const f of files) {
      const top = f.includes('/') ? f.slice(0, f.indexOf('/') + 1) : '(root)';
      groups[top] = (groups[top] ?? 0) + 1;
    }
    packSummary =
      `${info.filename}: ${(info.size / 1024).toFixed(0)} kB packed, ${(info.unpackedSize / 1024).toFixed(0)} kB unpacked, ` +
      `${files.length} files (${Object.entries(groups)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')})`;
    return packSummary;
  });

  // -- 3. install into an empty project without build tools -----------------
  const project = join(work, 'project');
  const bin = join(work, 'bin');
  mkdirSync(project);
  mkdirSync(bin);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'loadgen-pack-test', version: '1.0.0', private: true, type: 'module' }, null, 2),
  );
  // node, npm, npx and the shell npm runs scripts with; nothing else.
  const which = (cmd) => mustRun('sh', ['-c', `command -v ${cmd}`]).stdout.trim();
  symlinkSync(process.execPath, join(bin, 'node'));
  for (const tool of ['npm', 'npx', 'sh']) symlinkSync(which(tool), join(bin, tool));
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    // The outer npm's settings (npm test sets npm_config_*, npm_lifecycle_*, ...)
    // and compiler overrides stay outside.
    if (/^(npm_|NPM_|INIT_CWD$|NODE$|CC$|CXX$|CMAKE|MAKE|LOADGEN_)/.test(k)) continue;
    env[k] = v;
  }
  Object.assign(env, {
    PATH: bin,
    // onnxruntime-node (the demo's optional dependency) would fetch CUDA libraries.
    ONNXRUNTIME_NODE_INSTALL: 'skip',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  });
  const inProject = { cwd: project, env };

  step('no compiler, make, ninja or cmake on the install PATH', () => {
    const found = [];
    for (const tool of ['cmake', 'cc', 'c++', 'gcc', 'g++', 'clang', 'clang++', 'make', 'ninja']) {
      const r = run('sh', ['-c', `command -v ${tool}`], inProject);
      if (r.status === 0) found.push(`${tool} -> ${r.stdout.trim()}`);
    }
    if (found.length) throw new Error(`resolvable: ${found.join(', ')}`);
    const node = mustRun('sh', ['-c', 'command -v node && command -v npm && command -v npx'], inProject);
    return node.stdout.trim().split('\n').join(', ');
  });

  step('npm install <tarball> into an empty project', () => {
    // --foreground-scripts: the install step's one line reaches the output.
    const r = mustRun('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--foreground-scripts', tarball], inProject);
    const pkg = join(project, 'node_modules', 'loadgen');
    if (!existsSync(join(pkg, 'package.json'))) throw new Error('node_modules/loadgen is missing');
    const line = `${r.stdout}\n${r.stderr}`.split('\n').find((l) => l.startsWith('loadgen: '));
    const want = `loadgen: using the prebuilt binary ${relative(root, prebuild)} (`;
    if (!line?.startsWith(want)) throw new Error(`the install step said ${JSON.stringify(line)}, expected "${want}..."`);
    // docs/getting-started.md's npm 11 sentence: npm 11.19+ runs an install script that no
    // allowScripts covers (the line above is loadgen's) and only warns, naming it.
    const [major, minor] = mustRun('npm', ['--version'], inProject).stdout.trim().split('.').map(Number);
    if (major > 11 || (major === 11 && minor >= 19)) {
      const warned = `${r.stdout}\n${r.stderr}`.split('\n').some((l) => /^npm warn install-scripts +loadgen@[\d.]+ \(install: node scripts\/install\.mjs/.test(l));
      if (!warned) throw new Error(`npm ${major}.${minor} ran loadgen's install script without the "not yet covered by allowScripts" warning docs/getting-started.md describes:\n${tail(r.stderr)}`);
    }
    return `node_modules/loadgen ${JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version}; ${line}`;
  });

  // -- 4. the prebuild is what loads ----------------------------------------
  step('node-gyp-build resolves the prebuild (nothing built from source)', () => {
    const pkg = join(project, 'node_modules', 'loadgen');
    if (existsSync(join(pkg, 'build'))) throw new Error('node_modules/loadgen/build exists: the install built from source');
    const r = mustRun(
      'node',
      ['-e', "const p=require('node-gyp-build').path(process.argv[1]);require(p);console.log(p)", pkg],
      inProject,
    );
    const loaded = r.stdout.trim();
    if (relative(pkg, loaded) !== relative(root, prebuild)) throw new Error(`loaded ${loaded}`);
    return relative(project, loaded);
  });

  if (withArm64) {
    step('node-gyp-build picks prebuilds/linux-arm64 for arm64', () => {
      const pkg = join(project, 'node_modules', 'loadgen');
      // node-gyp-build takes the architecture from npm_config_arch when set.
      const r = mustRun('node', ['-e', "console.log(require('node-gyp-build').path(process.argv[1]))", pkg], {
        ...inProject,
        env: { ...env, npm_config_arch: 'arm64' },
      });
      const picked = relative(pkg, r.stdout.trim());
      if (picked !== join('prebuilds', 'linux-arm64', 'loadgen.napi.node')) throw new Error(`picked ${picked}`);
      return `${picked} (it runs under qemu in npm run test:arm64)`;
    });
  }

  // -- 5. the CLI ----------------------------------------------------------------
  step('npx loadgen run --sut null --scenario Offline', () => {
    mustRun(
      'npx',
      ['--no', 'loadgen', 'run', '--sut', 'null', '--scenario', 'Offline',
        '--set', 'min_duration_ms=0', '--set', 'min_query_count=1000', '--outdir', 'out'],
      inProject,
    );
    const summary = readFileSync(join(project, 'out', 'mlperf_log_summary.txt'), 'utf8');
    if (!/^Result is : VALID$/m.test(summary)) throw new Error(`summary is not VALID:\n${summary.slice(0, 800)}`);
    return 'out/mlperf_log_summary.txt: Result is : VALID';
  });

  // -- 6. ESM import ---------------------------------------------------------------
  step("ESM: import { startTest, createNullSut } from 'loadgen'", () => {
    writeFileSync(
      join(project, 'esm-check.mjs'),
      `import { startTest, createNullSut, createSyntheticQsl } from 'loadgen';
import { mkdirSync } from 'node:fs';
if (typeof startTest !== 'function' || typeof createNullSut !== 'function') throw new Error('missing exports');
mkdirSync('esm-out', { recursive: true });
const result = await startTest(createNullSut(), createSyntheticQsl(64),
  { scenario: 'Offline', minDurationMs: 0, minQueryCount: 100 }, { outdir: 'esm-out' });
console.log(result.validity);
`,
    );
    const r = mustRun('node', ['esm-check.mjs'], inProject);
    if (r.stdout.trim() !== 'VALID') throw new Error(`startTest gave ${r.stdout.trim()}`);
    return 'startTest(createNullSut(), ...) -> VALID';
  });

  // -- 7. TypeScript types ------------------------------------------------------------
  step("TypeScript: tsc --noEmit against the package's types", () => {
    writeFileSync(
      join(project, 'types-check.ts'),
      `import { startTest, createNullSut, createSyntheticQsl, type TestResult, type TestSettingsInput } from 'loadgen';
const settings: TestSettingsInput = { scenario: 'Offline', minQueryCount: 10 };
// @ts-expect-error: the scenario is a union of the four names, not any string
const wrong: TestSettingsInput = { scenario: 'Nope' };
export async function check(): Promise<boolean> {
  const result: TestResult = await startTest(createNullSut(), createSyntheticQsl(16), settings);
  return result.valid && wrong !== undefined;
}
`,
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify(
        {
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            skipLibCheck: false,
            // @types/node from the repository: the project installs nothing else.
            typeRoots: [join(root, 'node_modules', '@types')],
            types: ['node'],
          },
          files: ['types-check.ts'],
        },
        null,
        2,
      ),
    );
    mustRun('node', [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], inProject);
    return 'types resolved through exports["."].types';
  });

  step("TypeScript: the examples of README.md and docs/*.md compile under --strict; the public types need no @types/node", () => {
    // Every ```ts block of README.md and docs/*.md that imports from 'loadgen'
    // is a whole program: it must type-check as shown (ESM, top-level await).
    // test/docs-code-blocks.test.ts compiles the same blocks against the checkout.
    const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
    const files = [];
    const counts = {};
    for (const page of pages) {
      const text = readFileSync(join(root, page), 'utf8');
      const blocks = [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]).filter((b) => /^import [^;]* from 'loadgen';/m.test(b));
      counts[page] = blocks.length;
      blocks.forEach((code, i) => {
        const file = `${page.replace(/[/.]/g, '-')}-${i + 1}.mts`;
        writeFileSync(join(project, file), code);
        files.push(file);
      });
    }
    // The README's TypeScript SUT, and the docs' examples (typescript-suts, network-suts, llm-benchmarks, ...).
    if (counts['README.md'] < 1) throw new Error(`expected the README's TypeScript SUT, found ${counts['README.md']} blocks`);
    if (files.length < 14) throw new Error(`expected the TypeScript examples of README.md and docs/ (14 or more), found ${files.length}: ${JSON.stringify(counts)}`);
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const options = { strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: false };
    writeFileSync(
      join(project, 'tsconfig.readme.json'),
      JSON.stringify({ compilerOptions: { ...options, typeRoots: [join(root, 'node_modules', '@types')], types: ['node'] }, files }, null, 2),
    );
    mustRun('node', [tsc, '-p', 'tsconfig.readme.json'], inProject);
    // Without Node's types (no @types/node, no DOM): every public declaration still resolves.
    writeFileSync(join(project, 'no-node-types.ts'), "import * as loadgen from 'loadgen';\nexport const api: typeof loadgen = loadgen;\n");
    writeFileSync(
      join(project, 'tsconfig.nonode.json'),
      JSON.stringify({ compilerOptions: { ...options, lib: ['ES2022'], types: [] }, files: ['no-node-types.ts'] }, null, 2),
    );
    mustRun('node', [tsc, '-p', 'tsconfig.nonode.json'], inProject);
    return `${files.length} examples of README.md and docs/ strict; declarations need no @types/node`;
  });

  // -- 8. the from-source fallback explains itself -----------------------------------
  step('forced build from source without tools: says what to install', () => {
    const r = run('node', [join('node_modules', 'loadgen', 'scripts', 'install.mjs')], {
      ...inProject,
      env: { ...env, npm_config_build_from_source: 'true' },
    });
    const text = r.stdout + r.stderr;
    if (r.status === 0) throw new Error('exited 0');
    for (const want of ['cmake', 'C++ compiler', 'npm rebuild loadgen']) {
      if (!text.includes(want)) throw new Error(`message lacks "${want}":\n${text}`);
    }
    if (existsSync(join(project, 'node_modules', 'loadgen', 'build', 'Release'))) {
      throw new Error('left a build/Release behind');
    }
    return `exit ${r.status}, ${text.trim().split('\n').length} lines of advice`;
  });

  // -- 9. the demo ------------------------------------------------------------------
  // The demo is `loadgen run` without --sut: run it once the package has it
  // (lib/demo/ or lib/demo*.ts built to dist/, and the CLI refers to it).
  const pkgDist = join(project, 'node_modules', 'loadgen', 'dist');
  const hasDemo =
    (existsSync(join(pkgDist, 'demo')) || readdirSync(pkgDist).some((f) => /^demo.*\.js$/.test(f))) &&
    /demo/.test(readFileSync(join(pkgDist, 'cli.js'), 'utf8'));
  if (!hasDemo) {
    console.log('skip demo: the package has no demo yet (no dist/demo* used by dist/cli.js)');
    return;
  }
  step('demo: npx loadgen run --set min_duration_ms=500 --quiet --outdir demo', () => {
    mustRun('npx', ['--no', 'loadgen', 'run', '--set', 'min_duration_ms=500', '--quiet', '--outdir', 'demo'], inProject);
    const summaries = findFiles(join(project, 'demo'), 'mlperf_log_summary.txt');
    if (!summaries.length) throw new Error('the demo wrote no mlperf_log_summary.txt under demo/');
    return relative(project, summaries[0]);
  });
}
