/**
 * Plugins that keep durable work name its files in their manifest
 * (`activation.onStartupIfState`: the agent plugin, its intake journals). When one of those
 * holds something a previous gateway left, the plugin loads as the gateway starts rather
 * than at the first new message, so its service starts and resumes the work. Only the first
 * byte is read: what the work is stays the owning plugin's business.
 */
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { KernelServices } from '../../sdk/index.js';

type PluginRecord = ReturnType<KernelServices['plugins']>[number];

/** Plugins not loaded yet whose declared state files hold something. */
export function pluginsWithLeftWork(plugins: readonly PluginRecord[], stateDir: string): PluginRecord[] {
  const holds = (pattern: string) => stateHoldsData(stateDir, pattern);
  const declared = (record: PluginRecord) => record.manifest?.activation?.onStartupIfState ?? [];
  return plugins.filter((record) => record.status === 'ready' && declared(record).some(holds));
}

/** Whether a file under `dir` matching `pattern` (`/`-separated, `*` = any one name) holds data. */
export function stateHoldsData(dir: string, pattern: string): boolean {
  const [head, ...rest] = pattern.split('/').filter(Boolean);
  if (head === undefined || head === '..') return false;
  let names = [head];
  if (head === '*') {
    try {
      names = readdirSync(dir);
    } catch {
      return false;
    }
  }
  const below = rest.join('/');
  return names.some((name) => (below ? stateHoldsData(join(dir, name), below) : firstByteSet(join(dir, name))));
}

/** A NUL first byte counts as empty: a preallocated file (the intake journal's padding) holds nothing yet. */
function firstByteSet(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    const first = Buffer.alloc(1);
    return readSync(fd, first, 0, 1, 0) === 1 && first[0] !== 0;
  } catch {
    return false; // A directory: nothing to resume from.
  } finally {
    closeSync(fd);
  }
}
