/**
 * Embeddings for memory search, offered as the service "embeddings": which provider an
 * agent's memorySearch settings select (a local GGUF through node-llama-cpp, OpenAI-compatible
 * HTTP, Gemini, Voyage, or one another plugin registered as `embedding-provider:<id>`), its
 * fallback, and why, for `memory status`. Memory backends reach it through the SDK's
 * `embeddingsForIndex`. Importing this module loads no native code: node-llama-cpp loads on a
 * local provider's first embed.
 */
import { definePlugin, runtimeDeps } from '../../sdk/index.js';
import { EMBEDDINGS_SERVICE_ID, type EmbeddingsService } from '../../sdk/memory/index.js';
import { selectMemoryEmbeddings } from './plugin-providers.js';

export default definePlugin({
  id: 'embeddings',
  register(api) {
    const { kernel } = api;
    const deps = runtimeDeps(kernel, 'local memory embeddings');
    const service: EmbeddingsService = {
      // Config is read on every call, as before: a backend opens an agent's index with the settings of that moment.
      select: (settings, options = {}) =>
        selectMemoryEmbeddings(settings, {
          config: kernel.config(),
          capabilities: kernel.capabilities,
          plugins: () => kernel.plugins(),
          env: kernel.env,
          logger: options.logger ?? api.logger,
          runtimeDeps: deps,
        }),
    };
    api.registerService({ id: EMBEDDINGS_SERVICE_ID, api: service });
  },
});
