/**
 * The default memory backend: Markdown memory indexed in one SQLite file per agent, searched
 * by vectors and keywords together. Everything but the index itself (tools, CLI, watcher,
 * per-agent settings) comes from the memory SDK.
 */
import { selectEmbeddingProvider } from '../../sdk/memory/embedding-providers.js';
import { defineMemoryPlugin } from '../../sdk/memory/index.js';
import { SqliteMemoryIndex } from '../../sdk/memory/sqlite/index.js';

export default defineMemoryPlugin({
  id: 'memory-sqlite',
  backend: 'sqlite',
  createIndex: (settings, ctx) =>
    SqliteMemoryIndex.open(settings, {
      embeddings: selectEmbeddingProvider(settings, { config: ctx.api.kernel.config(), env: ctx.env, logger: ctx.logger, stateDir: ctx.stateDir }),
      logger: ctx.logger,
    }),
});
