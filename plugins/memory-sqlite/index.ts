/**
 * The default memory backend: Markdown memory indexed in one SQLite file per agent, searched
 * by vectors and keywords together. The index is the SQLite engine's ("memory-engine:sqlite",
 * plugin memory-sqlite-engine), its embeddings come from the "embeddings" service, and
 * everything else (tools, CLI, watcher, per-agent settings, ranking) from the "memory-core"
 * service (plugin memory-core), through defineMemoryPlugin.
 */
import {
  defineMemoryPlugin,
  embeddingsForIndex,
  memoryEngineServiceId,
  type MemoryEngine,
} from '../../sdk/memory/index.js';
import { requireService } from '../../sdk/services.js';

export default defineMemoryPlugin({
  id: 'memory-sqlite',
  backend: 'sqlite',
  async createIndex(settings, ctx) {
    // The engine first: providers selected for an index that cannot open would be left unclosed.
    const engine = await requireService<MemoryEngine>(ctx.api.kernel, memoryEngineServiceId('sqlite'), 'memory-sqlite');
    const embeddings = await embeddingsForIndex(settings, ctx);
    return engine.open(settings, {
      embeddings,
      logger: ctx.logger,
      ranking: ctx.ranking,
      files: ctx.files,
      text: ctx.text,
    });
  },
});
