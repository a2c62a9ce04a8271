/**
 * One gateway per state dir. The lock file is created with link(2), which fails if the
 * file exists, so two gateways starting together cannot both win. A lock left by a
 * process that no longer exists is renamed away (only one contender's rename succeeds)
 * and taken over.
 */
import { hostname } from 'node:os';
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { ensurePrivateDir, PRIVATE_FILE_MODE, writeJsonAtomic } from '../../sdk/index.js';

import { gatewayLockPath as lockPath, lockHolderAlive as holderAlive, type GatewayLockInfo as LockInfo } from '../../sdk/operator.js';
export type { LockInfo };

export class GatewayLockError extends Error {
  constructor(
    message: string,
    readonly holder?: LockInfo,
  ) {
    super(message);
    this.name = 'GatewayLockError';
  }
}

export interface GatewayLock {
  path: string;
  update(info: Partial<LockInfo>): void;
  release(): void;
}

export { gatewayLockPath as lockPath, lockHolderAlive as holderAlive } from '../../sdk/operator.js';

function readLock(path: string): LockInfo | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LockInfo;
  } catch {
    return undefined;
  }
}

export function acquireLock(stateDir: string, info: Omit<LockInfo, 'pid' | 'hostname' | 'startedAt'> = {}): GatewayLock {
  ensurePrivateDir(stateDir);
  const path = lockPath(stateDir);
  const mine: LockInfo = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString(), ...info };
  for (let attempt = 0; attempt < 5; attempt++) {
    const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(temp, `${JSON.stringify(mine)}\n`, { mode: PRIVATE_FILE_MODE });
    try {
      linkSync(temp, path);
      rmSync(temp, { force: true });
      return {
        path,
        update(more) {
          Object.assign(mine, more);
          writeJsonAtomic(path, mine);
        },
        release() {
          if (readLock(path)?.pid === process.pid) rmSync(path, { force: true });
        },
      };
    } catch (error) {
      rmSync(temp, { force: true });
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readLock(path);
    if (holderAlive(holder)) {
      throw new GatewayLockError(
        `another gateway is already running for this state dir (pid ${holder!.pid}${holder!.port ? `, port ${holder!.port}` : ''}); stop it first or use a different OPENCLAW_STATE_DIR`,
        holder,
      );
    }
    const stale = `${path}.stale-${randomBytes(4).toString('hex')}`;
    try {
      renameSync(path, stale);
      rmSync(stale, { force: true });
    } catch {
      // Another contender moved it first; try again.
    }
  }
  throw new GatewayLockError(`could not acquire ${path}`);
}
