/**
 * The SQLite memory engine as the service "memory-engine:sqlite" (sdk/memory/engine.ts): one
 * SQLite file per agent with the Markdown chunks, FTS5 over them, their embeddings (sqlite-vec
 * when it loads, else cosine in JS) and an embedding cache. memory-sqlite is this engine
 * behind the memory tools; memory-qmd answers from it when QMD fails. It is a plugin of its
 * own because a memory plugin that does not hold the slot is off, and memory-qmd holds it.
 * Importing this module loads no native code; better-sqlite3 and sqlite-vec load in `open`.
 */
import { definePlugin } from '../../sdk/index.js';
import { type MemoryEngine, memoryEngineServiceId } from '../../sdk/memory/index.js';
import { SqliteMemoryIndex } from './engine.js';

export default definePlugin({
  id: 'memory-sqlite-engine',
  register(api) {
    const engine: MemoryEngine = { open: (settings, options) => SqliteMemoryIndex.open(settings, options) };
    api.registerService({ id: memoryEngineServiceId('sqlite'), api: engine });
  },
});
