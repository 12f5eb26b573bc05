/**
 * A native row's client threads and whether its mapping reads every body in JS: 'native' (1),
 * 'native-xN' (N), 'native-noread' (1, none), 'native-noread-xN' (N, none); undefined for the
 * others ('native-thread' and undici's).
 */
export function nativeDispatchThreads(dispatch: string): { threads: number; bodiesReadInJs: boolean } | undefined {
  const m = /^native(-noread)?(?:-x(\d+))?$/.exec(dispatch);
  return m === null ? undefined : { threads: m[2] === undefined ? 1 : Number(m[2]), bodiesReadInJs: m[1] === undefined };
}

/** How a network bench row names a dispatch mode (lib/bench/net.ts NetDispatch). */
export function dispatchLabel(dispatch: string): string {
  if (dispatch === 'native') return 'native transport';
  if (dispatch === 'native-thread') return 'native, reactor thread';
  if (dispatch === 'native-noread') return 'native, no body in JS';
  if (dispatch.startsWith('native-x')) return `native, ${dispatch.slice('native-x'.length)} client threads`;
  if (dispatch.startsWith('native-noread-x')) return `native, ${dispatch.slice('native-noread-x'.length)} client threads, no body in JS`;
  return `undici ${dispatch}`;
}

/** What clientShareDispatch reads of a peak row (lib/bench/net.ts PeakRow). */
interface PeakRate<D extends string> {
  dispatch: D;
  peakQps: number;
  highestValidQps: number;
}

/**
 * The client-share rows' mode: the faster single-thread one (native inline
 * counts as one; its rows with several client threads, the worker mode and
 * 'native-noread', whose bodies the share rows choose for themselves, do
 * not), by the highest rate it ran VALID at, confirmed or not. Ranked by the
 * confirmed peak first, a noisy run that confirmed no native peak (one
 * INVALID run in each confirmation) measured undici's share instead, at a
 * fifth of native's rate (2026-11-29: native VALID up to 82,879/s, undici
 * wake confirmed at 18,499/s).
 */
export function clientShareDispatch<D extends string>(peaks: readonly PeakRate<D>[]): D | 'wake' {
  const best = (p: PeakRate<D>): number => Math.max(p.peakQps, p.highestValidQps);
  return peaks.filter((p) => p.dispatch !== 'worker' && !p.dispatch.startsWith('native-noread') && !p.dispatch.startsWith('native-x'))
    .sort((a, b) => best(b) - best(a) || b.peakQps - a.peakQps)[0]?.dispatch ?? 'wake';
}
