/**
 * The default memory backend: Markdown memory indexed in one SQLite file per agent, searched
 * by vectors and keywords together. Everything but the index itself (tools, CLI, watcher,
 * per-agent settings) comes from the memory SDK.
 */
import { embeddingsForIndex } from '../../sdk/memory/embedding-plugins.js';
import { defineMemoryPlugin } from '../../sdk/memory/index.js';
import { SqliteMemoryIndex } from '../../sdk/memory/sqlite/index.js';

export default defineMemoryPlugin({
  id: 'memory-sqlite',
  backend: 'sqlite',
  createIndex: async (settings, ctx) => SqliteMemoryIndex.open(settings, { embeddings: await embeddingsForIndex(settings, ctx), logger: ctx.logger }),
});
