/**
 * The memory SDK: what every memory backend plugin builds on — defineMemoryPlugin and the
 * contracts of the "memory-core", engine and embeddings services (plugin.ts, engine.ts,
 * embeddings.ts), the settings a backend is handed (settings.ts), the memory-files contract
 * memory-core fills in (files.ts) and the text kit's contract (text.ts).
 */
export * from './plugin.js';
export * from './settings.js';
export * from './files.js';
export * from './text.js';
export * from './embeddings.js';
export * from './engine.js';
/** The memory contract suite imports vitest, so it has its own subpath: `@claw-assistant/claw/sdk/memory/contract`. */
export type { MemoryContractTarget } from './contract.js';
