/**
 * One gateway per state dir: `<stateDir>/gateway.lock` names the running gateway (pid,
 * host, port). Unlike the config lock nobody waits for it: a second gateway refuses to start
 * and names the first. A lock left by a process that no longer exists is taken over.
 */
import { rmSync } from 'node:fs';
import {
  ensurePrivateDir,
  writeJsonAtomic,
  breakLockFile,
  createLockFile,
  lockHolder,
  readLockFile,
} from '../../sdk/index.js';
import { lockHolderAlive as holderAlive } from '../../sdk/index.js';
import { gatewayLockPath as lockPath, type GatewayLockInfo as LockInfo } from '../../sdk/cli.js';
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

export function acquireLock(
  stateDir: string,
  info: Omit<LockInfo, 'pid' | 'hostname' | 'startedAt'> = {},
): GatewayLock {
  ensurePrivateDir(stateDir);
  const path = lockPath(stateDir);
  const mine: LockInfo = { ...lockHolder(), ...info };
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createLockFile(path, mine)) {
      return {
        path,
        update(more) {
          Object.assign(mine, more);
          writeJsonAtomic(path, mine);
        },
        release() {
          if (readLockFile(path)?.pid === process.pid) rmSync(path, { force: true });
        },
      };
    }
    const holder = readLockFile<LockInfo>(path);
    if (holderAlive(holder)) {
      throw new GatewayLockError(
        `another gateway is already running for this state dir (pid ${holder!.pid}${holder!.port ? `, port ${holder!.port}` : ''}); stop it first or use a different OPENCLAW_STATE_DIR`,
        holder,
      );
    }
    breakLockFile(path);
  }
  throw new GatewayLockError(`could not acquire ${path}`);
}
