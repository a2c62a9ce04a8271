/**
 * The SQLite memory engine (FTS5 + sqlite-vec + embedding cache), shared by the
 * memory-sqlite plugin and by backends that fall back to it. Importing this module loads
 * no native code; better-sqlite3 and sqlite-vec load inside `SqliteMemoryIndex.open`.
 */
export { SqliteMemoryIndex, type SqliteMemoryIndexOptions } from './engine.js';
