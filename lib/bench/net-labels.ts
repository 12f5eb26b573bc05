/** How a network bench row names a dispatch mode (lib/bench/net.ts NetDispatch). */
export function dispatchLabel(dispatch: string): string {
  if (dispatch === 'native') return 'native transport';
  if (dispatch === 'native-thread') return 'native, reactor thread';
  return `undici ${dispatch}`;
}
