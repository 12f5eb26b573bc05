#!/usr/bin/env node
// Stand-in for node-gyp used by `npm run prebuild` (prebuildify --node-gyp):
// prebuildify 6 only knows node-gyp, this project builds with cmake-js.
//
// prebuildify calls `<this> rebuild --target=<node version> --devdir=<dir>
// --arch=<arch> --release|--debug` from its --cwd, then takes the first *.node
// file in <cwd>/build/Release (or build/Debug), strips it and moves it to
// prebuilds/<platform>-<arch>/. The addon is N-API only (package.json
// "binary.napi_versions"), so cmake-js compiles against node-api-headers and
// the --target/--devdir arguments (Node version, header cache) do not matter:
// one binary serves every Node >= 20.
//
// The build shares cmake-js's build tree with `npm run build:native` (so a
// prebuild after a build only relinks), with the release settings forced.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

const args = process.argv.slice(2);
const command = args.find((a) => !a.startsWith('-')) ?? 'rebuild';
const option = (name) => {
  const hit = args.find((a) => a.startsWith(`--${name}=`));
  return hit === undefined ? undefined : hit.slice(name.length + 3);
};
const debug = args.includes('--debug');

if (command !== 'rebuild' && command !== 'build') {
  fail(`unsupported node-gyp command "${command}" (only rebuild/build)`);
}
const arch = option('arch');
if (arch && arch !== process.arch) {
  fail(`cross-compiling is not supported (asked for ${arch}, this machine is ${process.arch})`);
}

const config = debug ? 'Debug' : 'Release';
const cmakeJs = require.resolve('cmake-js/bin/cmake-js');
const common = [
  '--directory', root,
  // prebuildify looks in <its --cwd>/build/<config>; cmake-js writes the
  // addon to <out>/<config>/loadgen.node.
  '--out', join(process.cwd(), 'build'),
  '--config', config,
];
// configure first: an existing build tree keeps its cached options otherwise.
runCmakeJs('configure', ...common, `--CDCMAKE_BUILD_TYPE=${config}`, '--CDLOADGEN_ADDON_TYPE_CHECKS=OFF');
runCmakeJs('build', ...common);

function runCmakeJs(...cmdArgs) {
  console.error(`prebuild: cmake-js ${cmdArgs.join(' ')}`);
  const r = spawnSync(process.execPath, [cmakeJs, ...cmdArgs], { cwd: root, stdio: 'inherit' });
  if (r.error) fail(String(r.error));
  if (r.status !== 0) fail(`cmake-js ${cmdArgs[0]} exited with status ${r.status}`);
}

function fail(why) {
  console.error(`prebuild-node-gyp: ${why}`);
  process.exit(1);
}
