/**
 * What a Matrix account keeps between runs, owner-only under the state dir:
 *
 *   matrix/<account>/sync.json           the `since` token and the DM rooms learned
 *   credentials/matrix/<account>.json    the access token and device of a password login
 *
 * The sync file is replaced atomically after a batch's messages were journaled, never
 * before: a crash replays the batch from the old token and the pipeline's dedupe (by event
 * id) drops what it already has. A sync file written for another homeserver or user is not
 * used (its token means nothing there).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { keepCorruptCopy, writeJsonAtomic } from '../../sdk/index.js';

export interface SyncState {
  version: 1;
  homeserver: string;
  userId: string;
  since?: string;
  /** Person → the DM room the bot talks to them in. */
  dmRooms: Record<string, string>;
  /** Encrypted rooms already reported in the log. */
  reportedEncrypted: string[];
}

export interface CachedCredentials {
  version: 1;
  homeserver: string;
  userId: string;
  accessToken: string;
  deviceId: string;
}

const safe = (accountId: string) => accountId.replace(/[^\w.-]/g, '_');

export function syncFile(stateDir: string, accountId: string): string {
  return join(stateDir, 'matrix', safe(accountId), 'sync.json');
}

export function credentialsFile(stateDir: string, accountId: string): string {
  return join(stateDir, 'credentials', 'matrix', `${safe(accountId)}.json`);
}

function readJson(file: string): unknown {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    // A damaged file is kept aside for a look, and the account starts as new.
    keepCorruptCopy(file);
    return undefined;
  }
}

export function loadSyncState(file: string, homeserver: string, userId: string): SyncState {
  const fresh: SyncState = { version: 1, homeserver, userId, dmRooms: {}, reportedEncrypted: [] };
  const stored = readJson(file) as Partial<SyncState> | undefined;
  if (!stored || stored.version !== 1 || stored.homeserver !== homeserver || stored.userId !== userId) return fresh;
  return {
    ...fresh,
    ...(typeof stored.since === 'string' ? { since: stored.since } : {}),
    dmRooms: stored.dmRooms && typeof stored.dmRooms === 'object' ? { ...stored.dmRooms } : {},
    reportedEncrypted: Array.isArray(stored.reportedEncrypted) ? stored.reportedEncrypted.map(String) : [],
  };
}

export function saveSyncState(file: string, state: SyncState): void {
  // No flush to disk: a token lost to a power cut only replays a batch, which dedupe absorbs.
  writeJsonAtomic(file, state, { fsync: false });
}

export function loadCredentials(file: string, homeserver: string, userId: string): CachedCredentials | undefined {
  const stored = readJson(file) as Partial<CachedCredentials> | undefined;
  if (
    !stored ||
    stored.version !== 1 ||
    stored.homeserver !== homeserver ||
    stored.userId !== userId ||
    typeof stored.accessToken !== 'string' ||
    typeof stored.deviceId !== 'string'
  )
    return undefined;
  return stored as CachedCredentials;
}

export function saveCredentials(file: string, credentials: CachedCredentials): void {
  writeJsonAtomic(file, credentials);
}

export function forgetCredentials(file: string): boolean {
  if (!existsSync(file)) return false;
  rmSync(file, { force: true });
  return true;
}
