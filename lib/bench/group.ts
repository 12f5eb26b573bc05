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
