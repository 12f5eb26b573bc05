/**
 * package.json's `engines` is true of everything `npm ci` installs (issue
 * 25): the oldest Node of each line it allows satisfies every installed
 * package's own `engines.node`, so `npm ci` on it prints no EBADENGINE.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import semver from 'semver';
import { describe, expect, it } from 'vitest';

import { repoRoot } from './helpers.js';

interface LockEntry {
  version?: string;
  optional?: boolean;
  engines?: { node?: string } | string[];
}

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };

/** The oldest version of each comparator set of a range: '^20.19.0 || >=22.12.0' -> 20.19.0, 22.12.0. */
function oldestAllowed(range: string): string[] {
  return new semver.Range(range).set.map((comparators) => semver.minVersion(new semver.Range(comparators.map((c) => c.value).join(' ')))!.version);
}

describe('package.json engines', () => {
  it('allows only Node versions that every installed dependency supports', () => {
    const range = pkg.engines.node;
    expect(semver.validRange(range), range).not.toBeNull();
    const oldest = oldestAllowed(range);
    expect(oldest.length).toBeGreaterThan(0);
    const refused: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (path === '' || !path.includes('node_modules/')) continue;
      // npm skips an optional package whose platform or engines do not match, silently (npm 11.19's
      // `npm ci` on Node 20.20 skipped rollup's @napi-rs/lzma-linux-x64-gnu, which needs Node 22.20).
      if (entry.optional === true) continue;
      const needs = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (needs === undefined || semver.validRange(needs) === null) continue;
      for (const version of oldest) {
        if (!semver.satisfies(version, needs)) refused.push(`${path.replace(/^.*node_modules\//, '')}@${entry.version} needs node ${needs}, not ${version}`);
      }
    }
    expect(refused, `engines.node '${range}' allows Node versions that these packages refuse (npm ci prints EBADENGINE for each)`).toEqual([]);
  });
});
