/**
 * Lock files name the process that holds them (pid and host). A holder is presumed alive
 * unless this machine can show it is gone, so a lock is only ever taken over from a
 * process that cannot still be writing.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

export interface LockHolderInfo {
  pid: number;
  hostname: string;
}

/** Is the process that wrote `info` still running (on this machine)? */
export function lockHolderAlive(info: LockHolderInfo | undefined): boolean {
  if (!info || !Number.isInteger(info.pid) || info.pid <= 0) return false;
  if (info.hostname !== hostname()) return true; // Cannot check another machine's pids: assume alive.
  try {
    process.kill(info.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A recycled pid belongs to some unrelated program: on Linux, check it is a node process.
  try {
    const cmdline = readFileSync(`/proc/${info.pid}/cmdline`, 'utf8');
    return /node|claw/.test(cmdline);
  } catch {
    return true;
  }
}
