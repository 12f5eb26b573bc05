// Shared by scripts/prebuild-arm64.mjs and scripts/test-arm64.mjs: installs the
// Debian packages that provide missing commands (apt-get, with sudo when not
// root), saying what it runs. Nothing else in the repository installs
// system packages.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export function onPath(cmd) {
  return (process.env.PATH ?? '').split(delimiter).filter(Boolean).some((dir) => existsSync(join(dir, cmd)));
}

/** `needs`: [command, Debian package] pairs; installs the packages whose command is missing. */
export function ensureDebianTools(needs, who) {
  const packages = [...new Set(needs.filter(([cmd]) => !onPath(cmd)).map(([, pkg]) => pkg))];
  if (packages.length === 0) return;
  if (!onPath('apt-get')) {
    fail(who, `missing ${packages.join(', ')} and there is no apt-get here (these scripts need Debian or Ubuntu)`);
  }
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root && !onPath('sudo')) fail(who, `missing ${packages.join(', ')}; installing them needs root or sudo`);
  const prefix = root ? [] : ['sudo'];
  const apt = (...args) => {
    const argv = [...prefix, 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args];
    console.error(`${who}: ${argv.join(' ')}`);
    const r = spawnSync(argv[0], argv.slice(1), { stdio: 'inherit' });
    if (r.status !== 0) fail(who, `${argv.join(' ')} exited with ${r.status ?? r.error}`);
  };
  apt('update', '-qq');
  apt('install', '-y', '-qq', '--no-install-recommends', ...packages);
}

export function run(who, cmd, args, opts = {}) {
  console.error(`${who}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) fail(who, `${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(who, `${cmd} ${args.join(' ')} exited with status ${r.status}`);
  return r;
}

export function fail(who, why) {
  console.error(`${who}: ${why}`);
  process.exit(1);
}
