/**
 * better-sqlite3, loaded on first use only: it is a compiled add-on, and the gateway must be
 * able to start (and every plugin that does not need it work) on a machine where it is
 * missing or broken. A kit because more than one plugin opens SQLite files (the memory
 * index, the import of OpenClaw's session store) and each must pick the same major.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type Db = BetterSqlite3.Database;
export type DatabaseConstructor = typeof BetterSqlite3;

let sqlite: DatabaseConstructor | undefined;

/**
 * better-sqlite3 comes in two majors: 12 (built from source on install) for Node 20, and
 * 13 (prebuilt, installed as `better-sqlite3-node22`) for Node 22 and later — 13 crashes
 * on Node 20, and 12 aborts on Node 24 when the garbage collector frees a statement.
 */
export function sqliteModuleFor(nodeVersion: string = process.versions.node): string {
  return Number(nodeVersion.split('.')[0]) >= 22 ? 'better-sqlite3-node22' : 'better-sqlite3';
}

export function loadSqlite(): DatabaseConstructor {
  if (sqlite) return sqlite;
  const require = createRequire(import.meta.url);
  const name = sqliteModuleFor();
  try {
    sqlite = require(name) as DatabaseConstructor;
  } catch (error) {
    // Callers add what their user can do instead (another memory backend, skipping an import).
    throw new Error(`could not load ${name}, the SQLite driver (run npm install again): ${(error as Error).message}`);
  }
  return sqlite;
}
