/**
 * sqlite-vec, loaded into a connection on first use only: like better-sqlite3 (sdk/sqlite.ts)
 * it is native code, and an index without it still works (vectors are then compared in JS).
 */
import { createRequire } from 'node:module';
import type { Db } from '../../sdk/sqlite.js';

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
