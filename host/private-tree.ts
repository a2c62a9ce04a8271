/**
 * Owner-only modes for trees claw creates or audits under the state dir: installed plugins
 * and transpiled plugin code (the host and `claw plugins install`), and what `claw security
 * audit --fix` tightens.
 */
import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../sdk/fs.js';

/** Permission bits for the group and for others: none of them belong on state files. */
export const NON_OWNER_BITS = 0o077;

/**
 * The owner-only mode for an entry of mode `mode`: 0700 for a directory, 0600 for a file,
 * 0700 for a file its owner may execute (so an installed plugin's binaries keep working).
 */
export function privateModeOf(mode: number, isDirectory: boolean): number {
  if (isDirectory || mode & 0o100) return PRIVATE_DIR_MODE;
  return PRIVATE_FILE_MODE;
}

/**
 * Make a tree claw has just created owner-only (files copied or unpacked keep the modes
 * they came with). Symlinks are neither followed nor changed. Returns the paths changed.
 */
export function restrictTree(root: string): string[] {
  const changed: string[] = [];
  const visit = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    const wanted = privateModeOf(stat.mode, stat.isDirectory());
    if ((stat.mode & 0o777) !== wanted) {
      chmodSync(path, wanted);
      changed.push(path);
    }
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
  return changed;
}
