/**
 * The MiniSearch side of the backend: loading the package, the options an index is built
 * and reloaded with, and keyword search with scores relative to the best hit.
 *
 * minisearch is imported on first use, not at module load, so listing plugins or running
 * unrelated commands never pays for it (and a missing package fails only memory search).
 */
import type MiniSearch from 'minisearch';
import type { Options, SearchOptions } from 'minisearch';
import { isCjk, type MemoryText } from '../../sdk/memory/index.js';

/** What MiniSearch indexes per chunk; everything else lives in our own chunk records. */
export interface ChunkDoc {
  id: number;
  text: string;
}

export type Engine = MiniSearch<ChunkDoc>;
export type EngineClass = typeof MiniSearch;

let loading: Promise<EngineClass> | undefined;

export function loadMiniSearch(): Promise<EngineClass> {
  loading ??= import('minisearch').then(
    (module) => module.default,
    (error: Error) => {
      loading = undefined;
      throw new Error(`memory-minisearch needs the "minisearch" package (npm install minisearch): ${error.message}`);
    },
  );
  return loading;
}

/**
 * Prefix matching only for longer Latin terms ("budget" finds "budgets"), with a low
 * weight; no fuzzy matching, so a query never drifts to look-alike words. CJK terms are
 * single characters and bigrams already: a prefix there would match half the index.
 */
const SEARCH_OPTIONS: SearchOptions = {
  combineWith: 'OR',
  fuzzy: false,
  prefix: (term) => term.length >= 4 && !isCjk(term[0]!),
  weights: { fuzzy: 0, prefix: 0.3 },
};

/**
 * The same options must be used to build and to reload an index. Tokens come from
 * memory-core's tokenizer (CJK unigrams and bigrams), already lower-cased, so terms pass unchanged.
 */
function engineOptions(text: MemoryText): Options<ChunkDoc> {
  return {
    idField: 'id',
    fields: ['text'],
    storeFields: [],
    tokenize: (value) => text.tokenize(value),
    processTerm: (term) => term,
    // Discarded chunks are vacuumed explicitly after each sync, before the index is saved.
    autoVacuum: false,
    searchOptions: SEARCH_OPTIONS,
  };
}

export function createEngine(MiniSearchClass: EngineClass, text: MemoryText): Engine {
  return new MiniSearchClass<ChunkDoc>(engineOptions(text));
}

export function loadEngine(MiniSearchClass: EngineClass, serialized: unknown, text: MemoryText): Engine {
  return MiniSearchClass.loadJS<ChunkDoc>(serialized as Parameters<EngineClass['loadJS']>[0], engineOptions(text));
}

// Mixed Latin, digits, CJK and punctuation: enough to notice any change in how memory-core splits text.
const TOKENIZER_PROBE =
  'Claw memory: OPS-4711, dark_roast 2026-11-01; 记忆系统 東京のプロジェクト mixed中文text Ünïcode';

/**
 * A persisted index holds the tokens of its day; if the tokenizer changes, old terms
 * no longer match new queries, so the index records which tokenizer built it.
 */
export function tokenizerFingerprint(text: MemoryText): string {
  return text.hashText(JSON.stringify(text.tokenize(TOKENIZER_PROBE))).slice(0, 16);
}

/** Up to `limit` chunk ids by BM25, scored relative to the best hit (best = 1). */
export function keywordSearch(engine: Engine, query: string, limit: number): Array<{ id: number; score: number }> {
  const hits = engine.search(query);
  const best = hits[0]?.score ?? 0;
  if (!(best > 0)) return [];
  return hits.slice(0, limit).map((hit) => ({ id: hit.id as number, score: hit.score / best }));
}
