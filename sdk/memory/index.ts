/** The memory SDK: what every memory backend plugin builds on. */
export {
  defineMemoryPlugin,
  MemoryManager,
  type MemoryIndex,
  type MemoryIndexContext,
  type MemoryPluginOptions,
} from './plugin.js';
export {
  BUILTIN_EMBEDDING_PROVIDERS,
  isBuiltinEmbeddingProvider,
  resolveMemorySettings,
  SNIPPET_MAX_CHARS,
  type BuiltinEmbeddingProviderId,
  type EmbeddingProviderId,
  type MemorySettings,
} from './settings.js';
export {
  cappedNote,
  continuationNote,
  datedFileDay,
  listMemoryFiles,
  MemoryPathError,
  readMemoryLines,
  readMemoryText,
  resolveMemoryPath,
  type CappedFile,
  type MemoryFile,
  type MemoryGetLimits,
  type MemoryLines,
} from './files.js';
export {
  chunkMarkdown,
  estimateTokens,
  hashText,
  isCjk,
  segmentCjk,
  snippetAround,
  snippetOf,
  tokenize,
  tokenSet,
  type Chunk,
} from './text.js';
export {
  bm25RankToScore,
  cosine,
  finish,
  jaccard,
  keywordMinScore,
  mergeHybridResults,
  mmrRerank,
  normalizeBm25,
  sanitizeAndNormalizeEmbedding,
  temporalDecayMultiplier,
  type MergeOptions,
  type ScoredChunk,
} from './scoring.js';
/** Embeddings come from the "embeddings" service (the embeddings plugin); other plugins add providers as services. */
export {
  EMBEDDING_SERVICE_PREFIX,
  EMBEDDINGS_SERVICE_ID,
  embeddingServiceId,
  embeddingsForIndex,
  invalidEmbeddingAdapter,
  type EmbeddingLogger,
  type EmbeddingProvider,
  type EmbeddingSelection,
  type EmbeddingsService,
  type PluginEmbeddingAdapter,
  type PluginEmbeddingInstance,
} from './embeddings.js';
/** An engine other backends build on or fall back to is a service too ("memory-engine:sqlite"). */
export {
  MEMORY_ENGINE_SERVICE_PREFIX,
  memoryEngineServiceId,
  type MemoryEngine,
  type MemoryEngineOptions,
} from './engine.js';
export { contentTerms } from './query-terms.js';
export { createHashEmbedder, hashEmbedding } from './hash-embedder.js';
/** The memory contract suite imports vitest, so it has its own subpath: `@claw-assistant/claw/sdk/memory/contract`. */
export type { MemoryContractTarget } from './contract.js';
