import { join } from 'node:path';

/** Where the gateway writes its JSON-lines log (read by logs.tail). */
export function logFile(stateDir: string): string {
  return join(stateDir, 'logs', 'gateway.log');
}
