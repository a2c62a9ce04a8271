/**
 * Whether QMD's GGUF models are on disk, found by looking at files only.
 *
 * QMD resolves a model when it first needs one, and resolving an `hf:` model that is not in
 * its cache downloads it (hundreds of MB; impossible offline, and never wanted in the middle
 * of a search). So before any vector search, `qmd embed` or reranking, the plugin checks the
 * cache folder the way QMD's own `qmd pull` does: a file whose name contains the model file's
 * name, in `$XDG_CACHE_HOME/qmd/models` (here the agent's private QMD home). A model given as
 * a local path (QMD_EMBED_MODEL=/path/to/model.gguf) must exist as a file. Nothing here opens
 * a network connection or runs QMD.
 */
import { readdirSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

/** QMD 2.8's defaults (dist/llm.js); QMD_EMBED_MODEL / QMD_RERANK_MODEL override them, as in QMD. */
export const DEFAULT_EMBED_MODEL = 'hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf';
export const DEFAULT_RERANK_MODEL = 'hf:ggml-org/Qwen3-Reranker-0.6B-Q8_0-GGUF/qwen3-reranker-0.6b-q8_0.gguf';

export interface ModelPresence {
  /** The model QMD would use. */
  uri: string;
  /** The file when it is on disk. */
  path?: string;
  /** Where it was looked for. */
  lookedIn: string;
}

function isNonEmptyFile(path: string): boolean {
  try {
    const stat = statSync(path);
    return stat.isFile() && stat.size > 0;
  } catch {
    return false;
  }
}

/** Where `uri` would be (or is) on disk, without fetching anything. */
export function findModel(uri: string, xdgCache: string): ModelPresence {
  const cacheDir = join(xdgCache, 'qmd', 'models');
  if (!uri.startsWith('hf:')) {
    // A plain path or file name, as QMD accepts it.
    const path = isAbsolute(uri) ? uri : join(cacheDir, uri);
    return { uri, path: isNonEmptyFile(path) ? path : undefined, lookedIn: path };
  }
  const fileName = uri.split('/').pop() ?? '';
  let entries: string[] = [];
  try {
    entries = readdirSync(cacheDir);
  } catch {
    // No cache folder: nothing was ever pulled.
  }
  // node-llama-cpp names a pulled file with a prefix (hf_<owner>_<file>); a partial download ends otherwise.
  const found = fileName
    ? entries.find((name) => name.endsWith(fileName) && isNonEmptyFile(join(cacheDir, name)))
    : undefined;
  return { uri, path: found ? join(cacheDir, found) : undefined, lookedIn: cacheDir };
}

export function embedModel(env: Readonly<Record<string, string | undefined>>, xdgCache: string): ModelPresence {
  return findModel(env.QMD_EMBED_MODEL || DEFAULT_EMBED_MODEL, xdgCache);
}

export function rerankModel(env: Readonly<Record<string, string | undefined>>, xdgCache: string): ModelPresence {
  return findModel(env.QMD_RERANK_MODEL || DEFAULT_RERANK_MODEL, xdgCache);
}
