/**
 * The native pieces, loaded on first use only: better-sqlite3 and the sqlite-vec
 * extension are compiled add-ons, and the gateway must be able to start (and every other
 * plugin work) on a machine where they are missing or broken.
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
    throw new Error(`memory-sqlite could not load ${name} (run npm install again, or pick another memory backend): ${(error as Error).message}`);
  }
  return sqlite;
}

/**
 * Loads sqlite-vec into one connection (extensions are per connection) and returns its
 * version; throws with the reason when the extension is missing or is not sqlite-vec.
 */
export function loadVectorExtension(db: Db, extensionPath?: string): string {
  if (extensionPath) {
    db.loadExtension(extensionPath);
  } else {
    const require = createRequire(import.meta.url);
    (require('sqlite-vec') as { load(db: Db): void }).load(db);
  }
  // A library that loads but is not sqlite-vec must not pass as one.
  return String((db.prepare('SELECT vec_version() AS version').get() as { version: string }).version);
}
