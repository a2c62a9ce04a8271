/**
 * Memory backed by QMD (npm @tobilu/qmd), a local search sidecar: BM25, vectors and
 * reranking over Markdown. Chosen with `claw plugins enable memory-qmd` (the memory slot's
 * default holder is memory-sqlite); when qmd is missing or failing, answers come from the
 * built-in SQLite index. Install a project copy of qmd with `npm run setup:qmd`.
 */
import { defineMemoryPlugin } from '../../sdk/memory/index.js';
import { QmdMemoryIndex, type QmdPluginConfig } from './qmd-index.js';

export default defineMemoryPlugin<QmdPluginConfig>({
  id: 'memory-qmd',
  backend: 'qmd',
  // OpenClaw's QMD updates on boot too: the first search then finds its models loaded.
  indexOnStart: true,
  createIndex: (settings, context, config) => new QmdMemoryIndex(settings, context, config),
});
