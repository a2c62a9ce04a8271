/**
 * The memory host (OpenClaw's memory-core): the service "memory-core" that every memory
 * backend built with defineMemoryPlugin asks for at register time and hands its index to.
 * It registers the backend's tools, CLI, slot capability and background sync on the
 * backend's behalf (serve.ts) and gives engines the shared ranking (ranking.ts) and memory
 * files (files.ts: which files are memory, path containment, size caps). Settings
 * come from agents.defaults.memorySearch and contextLimits (settings.ts, schemas.ts).
 */
import { definePlugin } from '../../sdk/index.js';
import { MEMORY_CORE_SERVICE_ID, type MemoryCoreService } from '../../sdk/memory/index.js';
import type { MemoryManager } from './manager.js';
import { serveMemoryBackend } from './serve.js';

export default definePlugin({
  id: 'memory-core',
  register(api) {
    const served = new Set<MemoryManager>();
    const core: MemoryCoreService = {
      serve: (backendApi, options) => served.add(serveMemoryBackend(backendApi, options)),
    };
    api.registerService({ id: MEMORY_CORE_SERVICE_ID, api: core });
    // A new session warms its agent's index, so the turn's first memory_search finds it current.
    api.on('session_start', (_event, ctx) => {
      for (const manager of served) manager.warm(ctx.agentId);
    });
  },
});
