/** Appends each command event as one JSON line to <stateDir>/logs/commands.log (0600). */
import { chmodSync, mkdirSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';

interface CommandEvent {
  type: string;
  action: string;
  sessionKey: string;
  timestamp: Date;
  context: { stateDir?: string; senderId?: string; commandSource?: string };
}

export default async function commandLogger(event: CommandEvent): Promise<void> {
  if (event.type !== 'command' || !event.context.stateDir) return;
  const dir = join(event.context.stateDir, 'logs');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, 'commands.log');
  const line = {
    timestamp: event.timestamp.toISOString(),
    action: event.action,
    sessionKey: event.sessionKey,
    senderId: event.context.senderId ?? 'unknown',
    source: event.context.commandSource ?? 'unknown',
  };
  // One write of a whole line: concurrent events never interleave inside a line.
  await appendFile(file, `${JSON.stringify(line)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}
