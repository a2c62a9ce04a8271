/**
 * What memory-core registers for a backend, on the backend's own api (so the backend's
 * manifest declares them and they are the backend's capabilities): the memory slot
 * capability, the `memory_search` and `memory_get` tools, `claw memory` and `<id>-sync`.
 */
import { errorResult, jsonResult, type CliContext, type PluginApi, type ToolContext } from '../../sdk/index.js';
import {
  MemoryPathError,
  SNIPPET_MAX_CHARS,
  type MemoryLines,
  type MemoryPluginOptions,
} from '../../sdk/memory/index.js';
import { runMemoryCli } from './cli.js';
import { MemoryManager } from './manager.js';
import { snippetOf } from './text.js';

const SEARCH_DESCRIPTION =
  'Search your memory (MEMORY.md, memory/*.md and configured notes) before answering questions about prior work, decisions, dates, people, preferences or open tasks. Returns the best matching snippets with path and line range; read more with memory_get.';
const GET_DESCRIPTION =
  'Read lines of a memory file (MEMORY.md, memory/YYYY-MM-DD.md, or a path from memory_search results).';

export function serveMemoryBackend<Config extends Record<string, unknown>>(
  api: PluginApi<Config>,
  options: MemoryPluginOptions<Config>,
): MemoryManager<Config> {
  const manager = new MemoryManager(api, options);
  api.registerMemory(manager.backend());
  api.registerTool({
    name: 'memory_search',
    label: 'Memory Search',
    description: SEARCH_DESCRIPTION,
    parameters: {
      type: 'object',
      required: ['query'],
      additionalProperties: false,
      properties: {
        query: { type: 'string', minLength: 1, description: 'What to look for, in words.' },
        maxResults: { type: 'integer', minimum: 1, maximum: 50 },
        minScore: { type: 'number', minimum: 0, maximum: 1 },
      },
    },
    execute: async (params: { query: string; maxResults?: number; minScore?: number }, ctx: ToolContext) => {
      const result = await manager.search(params.query, {
        agentId: ctx.agentId,
        maxResults: params.maxResults,
        minScore: params.minScore,
        signal: ctx.signal,
      });
      const settings = manager.settings(ctx.agentId);
      return jsonResult({
        ...result,
        results: result.results.map((hit) => ({
          ...hit,
          snippet: snippetOf(hit.snippet, SNIPPET_MAX_CHARS),
          ...(settings.citations !== 'off' ? { citation: `${hit.path}#L${hit.startLine}-L${hit.endLine}` } : {}),
        })),
      });
    },
  });
  api.registerTool({
    name: 'memory_get',
    label: 'Memory Get',
    description: GET_DESCRIPTION,
    parameters: {
      type: 'object',
      required: ['path'],
      additionalProperties: false,
      properties: {
        path: { type: 'string', minLength: 1, description: 'MEMORY.md, memory/…, or a path from memory_search.' },
        from: { type: 'integer', minimum: 1, description: 'First line (1-based).' },
        lines: { type: 'integer', minimum: 1, description: 'How many lines.' },
      },
    },
    execute: async (params: { path: string; from?: number; lines?: number }, ctx: ToolContext) => {
      try {
        const read = await manager.get(params.path, {
          agentId: ctx.agentId,
          from: params.from,
          lines: params.lines,
        });
        const note = continuationNote(read, manager.settings(ctx.agentId).get.maxChars);
        return {
          content: [{ type: 'text', text: note ? `${read.text}\n\n${note}` : read.text }],
          details: {
            path: read.path,
            from: read.from,
            lines: read.lines,
            totalLines: read.totalLines,
            ...(read.truncated ? { truncated: true } : {}),
            ...(read.nextFrom ? { nextFrom: read.nextFrom } : {}),
          },
        };
      } catch (error) {
        if (error instanceof MemoryPathError) return errorResult(error.message);
        throw error;
      }
    },
  });
  api.registerCli({
    name: 'memory',
    description: 'Memory status, indexing and search',
    run: (argv: string[], ctx: CliContext) => runMemoryCli(argv, ctx, manager),
  });
  api.registerService({
    id: `${options.id}-sync`,
    start: () => manager.start(),
    stop: () => manager.stop(),
  });
  return manager;
}

/** The line the model reads after a windowed or cut `memory_get`, telling it how to read on. */
export function continuationNote(read: MemoryLines, maxChars: number): string | undefined {
  const last = read.from + read.lines - 1;
  const shown = `lines ${read.from}-${last} of ${read.totalLines}`;
  if (read.truncated) {
    const more = read.nextFrom ? `; read on with from=${read.nextFrom}` : '';
    return `[memory_get: cut at ${maxChars} characters (memoryGetMaxChars), ${shown} shown${more}]`;
  }
  if (read.nextFrom) return `[memory_get: ${shown} shown; read on with from=${read.nextFrom}]`;
  return undefined;
}
