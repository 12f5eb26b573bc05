/**
 * cmake/version_info.cmake, which native/CMakeLists.txt runs before every
 * build: the detail log's loadgen_version names the revision and sources a
 * build was made from, also when the build tree was configured at an older
 * revision (cmake-js compile reuses it); a build with nothing new leaves the
 * file alone (nothing recompiles).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { tempDir } from './helpers.js';

const root = join(import.meta.dirname, '..');
const has = (cmd: string) => spawnSync(cmd, ['--version']).status === 0;

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

describe.skipIf(!has('cmake') || !has('git'))('the build identity', () => {
  it('follows the revision and the sources, and is left alone when neither changed', () => {
    const repo = tempDir();
    mkdirSync(join(repo, 'native'));
    mkdirSync(join(repo, 'bindings'));
    writeFileSync(join(repo, 'package.json'), '{ "name": "x", "version": "1.2.3" }\n');
    copyFileSync(join(root, 'native', 'version_info.cc.in'), join(repo, 'native', 'version_info.cc.in'));
    writeFileSync(join(repo, 'native', 'a.cc'), 'int a() { return 1; }\n');
    const git = (...args: string[]) => run('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], repo);
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'first');
    const out = join(repo, 'version_info.cc');
    const write = () => run('cmake', [`-DLOADGEN_SOURCE_ROOT=${repo}`, `-DIN=${join(repo, 'native', 'version_info.cc.in')}`, `-DOUT=${out}`,
      '-P', join(root, 'cmake', 'version_info.cmake')], repo);

    write();
    const first = readFileSync(out, 'utf8');
    const rev1 = git('rev-parse', '--short', 'HEAD');
    expect(first).toContain(`R"lgv(1.2.3)lgv"`);
    expect(first).toContain(`R"lgv(${rev1})lgv"`);
    expect(first).toContain('"/native/a.cc":"');
    expect(first).toMatch(/^\/\/ identity [0-9a-f]{40}\n/);

    // Nothing new: not rewritten (same bytes, same time).
    const mtime = statSync(out).mtimeMs;
    write();
    expect(readFileSync(out, 'utf8')).toBe(first);
    expect(statSync(out).mtimeMs).toBe(mtime);

    // An edit: the status and the source's hash.
    writeFileSync(join(repo, 'native', 'a.cc'), 'int a() { return 2; }\n');
    write();
    const edited = readFileSync(out, 'utf8');
    expect(edited).toContain('M native/a.cc');
    expect(edited).not.toBe(first);

    // A new commit: its revision, whatever the tree was configured at.
    git('commit', '-q', '-am', 'second');
    write();
    const rev2 = git('rev-parse', '--short', 'HEAD');
    expect(rev2).not.toBe(rev1);
    const committed = readFileSync(out, 'utf8');
    expect(committed).toContain(`R"lgv(${rev2})lgv"`);
    expect(committed).toContain(`R"lgv(${rev2} second)lgv"`);
  });
});
