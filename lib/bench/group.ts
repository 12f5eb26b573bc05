/** Items grouped by an index, each group in the items' order: the pairing of a bench's samples with a server's records. */
export function groupByIndex<T>(items: Iterable<T>, indexOf: (item: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const index = indexOf(item);
    let list = groups.get(index);
    if (!list) groups.set(index, (list = []));
    list.push(item);
  }
  return groups;
}

/**
 * Pairs two groupings index by index: within an index, the k-th of `a` (in
 * `orderA`) with the k-th of `b` (in `orderB`); an index whose counts differ,
 * or that `b` lacks, is left out. Sorts the groups in place.
 */
export function pairInOrder<A, B>(
  a: Map<number, A[]>,
  b: Map<number, B[]>,
  orderA: (x: A, y: A) => number,
  orderB: (x: B, y: B) => number,
  each: (x: A, y: B, index: number) => void,
): void {
  for (const [index, as] of a) {
    const bs = b.get(index);
    if (!bs || bs.length !== as.length) continue;
    as.sort(orderA);
    bs.sort(orderB);
    for (let k = 0; k < as.length; k++) each(as[k]!, bs[k]!, index);
  }
}
