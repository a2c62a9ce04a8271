/**
 * Memory backend "minisearch": the memory contract (memory_search, memory_get, claw memory,
 * background sync) for installs that cannot build native modules. Keyword search is
 * MiniSearch (BM25) over Markdown chunks; when an embedding provider is configured, results
 * are re-ranked by vector similarity (hybrid 0.7 · vector + 0.3 · text).
 *
 * The slot still decides: this plugin is enabled by default, but only the holder of
 * `plugins.slots.memory` (memory-sqlite unless configured) registers its memory tools.
 */
import { embeddingsForIndex, type EmbeddingSelection, defineMemoryPlugin } from '../../sdk/memory/index.js';
import { MiniSearchMemoryIndex, BACKEND } from './memory-index.js';

export default defineMemoryPlugin({
  id: 'memory-minisearch',
  backend: BACKEND,
  async createIndex(settings, context) {
    let selection: EmbeddingSelection;
    try {
      selection = await embeddingsForIndex(settings, context);
    } catch (error) {
      // A broken provider setup must not take keyword search down with it.
      const reason = `the embedding provider could not be set up (${error instanceof Error ? error.message : String(error)}): keyword search only`;
      context.logger.warn(`memory: ${reason}`);
      selection = { reason };
    }
    return new MiniSearchMemoryIndex(settings, context, selection);
  },
});
