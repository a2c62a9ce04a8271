/** The memory SDK: what every memory backend plugin builds on. */
export { defineMemoryPlugin, MemoryManager, type MemoryIndex, type MemoryIndexContext, type MemoryPluginOptions } from './plugin.js';
export { resolveMemorySettings, SNIPPET_MAX_CHARS, type EmbeddingProviderId, type MemorySettings } from './settings.js';
export { continuationNote, datedFileDay, listMemoryFiles, MemoryPathError, readMemoryLines, resolveMemoryPath, type MemoryFile, type MemoryGetLimits, type MemoryLines } from './files.js';
export { chunkMarkdown, estimateTokens, hashText, isCjk, segmentCjk, snippetAround, snippetOf, tokenize, tokenSet, type Chunk } from './text.js';
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
export type { EmbeddingContext, EmbeddingFactory, EmbeddingProvider, EmbeddingSelection } from './embeddings.js';
export { selectEmbeddingProvider } from './embedding-providers.js';
export { embeddingServiceId, embeddingsForIndex, selectMemoryEmbeddings, type PluginEmbeddingAdapter, type PluginEmbeddingInstance } from './embedding-plugins.js';
export { createHashEmbedder, hashEmbedding } from './hash-embedder.js';
/** The memory contract suite imports vitest, so it has its own subpath: `@claw-assistant/claw/sdk/memory/contract`. */
export type { MemoryContractTarget } from './contract.js';
