/**
 * The `loadgen` command's last guard on what it prints: the API key it read
 * (lib/cli/network.ts) is redacted from the result, the summary and error
 * messages. Messages are redacted where they are made as well
 * (lib/net/secrets.ts); this covers text that reached the command another
 * way (a module's error, say).
 */
import { Secrets } from '../net/secrets.js';

export const cliSecrets = new Secrets();
