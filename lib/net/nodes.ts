/**
 * The nodes of a network SUT: `--url` values checked and normalised before
 * anything connects, and the SUT name built from the names the nodes gave.
 */
import { SettingsError } from '../errors.js';
import { echo } from '../settings/messages.js';

/** One node's address. */
export interface NodeAddress {
  /** scheme://host:port (what a pool connects to). */
  origin: string;
  /** A path prefix put before every request's path ('' for none), e.g. '/serving'. */
  basePath: string;
  /** origin + basePath: how the node is named in messages (never credentials). */
  url: string;
}

/**
 * Parses the `urls` option: http: or https: only, a port in 1..65535, no
 * credentials, no query or fragment, no duplicates; a bad one is a
 * SettingsError naming it (`--url` on the command line: exit 2). A URL with
 * credentials is refused without echoing it (it may hold a password).
 */
export function parseNodeUrls(urls: unknown): NodeAddress[] {
  if (!Array.isArray(urls) || urls.length === 0)
    throw new SettingsError('urls', urls, `urls: give at least one node URL (e.g. http://127.0.0.1:8000), got ${Array.isArray(urls) ? 'none' : typeof urls}`);
  const nodes: NodeAddress[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < urls.length; i++) {
    const raw: unknown = urls[i];
    if (typeof raw !== 'string') throw new SettingsError('urls', raw, `urls[${i}] must be a string, got ${typeof raw}`);
    const refuse = (problem: string): SettingsError => new SettingsError('urls', raw, `urls[${i}] '${echo(raw, 200)}'${problem.startsWith('is ') ? ' ' : ': '}${problem}`);
    // Checked on the raw text first: a URL that does not parse must not be echoed with its password.
    if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(raw))
      throw new SettingsError('urls', '<hidden>', `urls[${i}]: a URL with credentials (user:password@) is refused; pass an API key with apiKey (--api-key-env), not in the URL`);
    // The port as written: URL refuses one beyond 65535 without saying why, and takes 0.
    const port = /^[a-z][a-z0-9+.-]*:\/\/(?:\[[^\]]*\]|[^/?#:]*):(\d+)(?:[/?#]|$)/i.exec(raw)?.[1];
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) throw refuse(`port ${port} is not a port a node can listen on (1 to 65535)`);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw refuse('is not a URL; give http://HOST:PORT or https://HOST:PORT');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(`scheme ${url.protocol} is not supported; use http: or https:`);
    if (url.username !== '' || url.password !== '')
      throw new SettingsError('urls', '<hidden>', `urls[${i}]: a URL with credentials (user:password@) is refused; pass an API key with apiKey (--api-key-env), not in the URL`);
    if (url.hostname === '') throw refuse('names no host; give http://HOST:PORT');
    if (url.search !== '' || url.hash !== '') throw refuse('a node URL takes no query or fragment; give http://HOST:PORT[/base-path]');
    const basePath = url.pathname.replace(/\/+$/, '');
    const node: NodeAddress = { origin: url.origin, basePath, url: url.origin + basePath };
    if (seen.has(node.url)) throw new SettingsError('urls', raw, `urls[${i}] '${node.url}' is given twice; each node once`);
    seen.add(node.url);
    nodes.push(node);
  }
  return nodes;
}

/** Longest node name kept (a node's answer may be anything). */
const NODE_NAME_LIMIT = 120;

/** A name a node gave, made printable and short: it goes into the logs' SUT name. */
export function cleanNodeName(name: unknown, fallback: string): string {
  const text = typeof name === 'string' ? name : '';
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  if (clean === '') return fallback;
  return clean.length > NODE_NAME_LIMIT ? `${clean.slice(0, NODE_NAME_LIMIT)}...` : clean;
}

/**
 * Node names made unique (the Network division: each node has a unique
 * name): a name given by more than one node gets its node's address.
 */
export function uniqueNodeNames(names: readonly string[], nodes: readonly NodeAddress[]): string[] {
  const count = new Map<string, number>();
  for (const n of names) count.set(n, (count.get(n) ?? 0) + 1);
  const out = names.map((n, i) => (count.get(n)! > 1 ? `${n} @ ${hostOf(nodes[i]!)}` : n));
  // Two nodes on one host:port with different base paths: the whole URL.
  const again = new Map<string, number>();
  for (const n of out) again.set(n, (again.get(n) ?? 0) + 1);
  return out.map((n, i) => (again.get(n)! > 1 ? `${names[i]} @ ${nodes[i]!.url}` : n));
}

function hostOf(node: NodeAddress): string {
  return node.origin.replace(/^[a-z]+:\/\//, '');
}

/** The SUT name: contains 'Network SUT' and every node's (unique) name, as the Network division requires. */
export function networkSutName(kind: string, names: readonly string[]): string {
  return `Network SUT (${kind}): ${names.join(', ')}`;
}
