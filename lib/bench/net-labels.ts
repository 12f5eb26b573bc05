/** How a network bench row names a dispatch mode (lib/bench/net.ts NetDispatch). */
export function dispatchLabel(dispatch: string): string {
  if (dispatch === 'native') return 'native transport';
  if (dispatch === 'native-thread') return 'native, reactor thread';
  if (dispatch.startsWith('native-x')) return `native, ${dispatch.slice('native-x'.length)} client threads`;
  return `undici ${dispatch}`;
}
