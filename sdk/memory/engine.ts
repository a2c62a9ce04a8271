/**
 * A memory index engine as a service. An engine that more than one backend uses — the SQLite
 * engine answers for memory-sqlite, and for memory-qmd when QMD fails — lives in the plugin
 * that owns it, which registers it as the service `memory-engine:<name>` (declared under
 * `services` in its manifest) whose api is a MemoryEngine; a backend asks for it with
 * `requireService` instead of importing it.
 */
import type { Logger } from '../../kernel/index.js';
import type { EmbeddingSelection } from './embeddings.js';
import type { MemoryFiles } from './files.js';
import type { MemoryIndex, MemoryRanking } from './plugin.js';
import type { MemorySettings } from './settings.js';
import type { MemoryText } from './text.js';

export const MEMORY_ENGINE_SERVICE_PREFIX = 'memory-engine:';

export const memoryEngineServiceId = (name: string): string => `${MEMORY_ENGINE_SERVICE_PREFIX}${name}`;

export interface MemoryEngineOptions {
  /** The index owns these providers from then on and closes them in its `close()`. */
  embeddings: EmbeddingSelection;
  logger: Logger;
  /** Reported as `backend` (a backend that falls back to the engine may name itself). */
  backend?: string;
  /** The backend's `MemoryIndexContext.ranking`, `.files` and `.text`. */
  ranking: MemoryRanking;
  files: MemoryFiles;
  text: MemoryText;
}

export interface MemoryEngine {
  /** One agent's index at `settings.store`, opened (created when missing); it is brought up to date by `sync`. */
  open(settings: MemorySettings, options: MemoryEngineOptions): Promise<MemoryIndex>;
}
