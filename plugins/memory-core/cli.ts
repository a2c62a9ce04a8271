/**
 * `claw memory status [--deep]`, `claw memory index [--force]` (with a progress line:
 * files, chunks, embeddings per second) and `claw memory search "<query>" [--json]`.
 * Runs against the backend that holds the memory slot, in this process — except a search
 * while a gateway runs: that goes to the gateway's `memory.search`, whose index is already
 * loaded and synced, so a search costs a round trip instead of a process-wide index load
 * (and a QMD backend answers from its warm process). `--local` searches in this process.
 */
import type { CliContext, MemorySearchResult, MemorySyncProgress, MemorySyncStats } from '../../sdk/index.js';
import { parseFlags, runCliCommand, unknownCommand, UsageError } from '../../sdk/cli.js';

const HELP = `Usage: claw memory status [--deep] [--agent <id>] [--json]
       claw memory index [--force] [--agent <id>] [--json]
       claw memory search "<query>" [--max <n>] [--min-score <x>] [--agent <id>] [--local] [--json]`;

const FLAGS = {
  help: { type: 'boolean' },
  json: { type: 'boolean' },
  agent: { type: 'string' },
  deep: { type: 'boolean' },
  force: { type: 'boolean' },
  max: { type: 'string' },
  'min-score': { type: 'string' },
  local: { type: 'boolean' },
} as const;

/** What the memory commands drive: a MemoryManager (declared here so the two files do not import each other). */
export interface MemoryCliTarget {
  sync(
    agentId?: string,
    options?: { force?: boolean; onProgress?: (progress: MemorySyncProgress) => void },
  ): Promise<MemorySyncStats>;
  search(
    query: string,
    options?: { agentId?: string; maxResults?: number; minScore?: number; signal?: AbortSignal },
  ): Promise<MemorySearchResult>;
  status(options?: { agentId?: string; deep?: boolean }): Promise<Record<string, unknown>>;
  /** The agent's search defaults (memorySearch.query), so a search the gateway runs asks the same. */
  settings(agentId?: string): { query: { maxResults: number; minScore: number } };
  stop(): Promise<void>;
}

export function runMemoryCli(argv: string[], ctx: CliContext, manager: MemoryCliTarget): Promise<number> {
  return runCliCommand(ctx, async () => {
    const { values, positionals } = parseFlags(argv, FLAGS);
    const [action, ...rest] = positionals;
    if (values.help || !action) {
      ctx.stdout.write(`${HELP}\n`);
      return action || values.help ? 0 : 2;
    }
    const agentId = values.agent as string | undefined;
    try {
      switch (action) {
        case 'status':
          return await status(ctx, manager, agentId, values.deep === true, values.json === true);
        case 'index':
          return await index(ctx, manager, agentId, values.force === true, values.json === true);
        case 'search': {
          const query = rest.join(' ').trim();
          if (!query) throw new UsageError('give the query: claw memory search "<query>"');
          const max = values.max === undefined ? undefined : Number(values.max);
          if (max !== undefined && !(Number.isInteger(max) && max > 0))
            throw new UsageError(`--max must be a positive whole number, got "${String(values.max)}"`);
          const minScore = values['min-score'] === undefined ? undefined : Number(values['min-score']);
          if (minScore !== undefined && !(minScore >= 0 && minScore <= 1))
            throw new UsageError(`--min-score must be between 0 and 1, got "${String(values['min-score'])}"`);
          const options = { agentId, maxResults: max, minScore };
          const viaGateway = values.local !== true && ctx.gateway.running() !== undefined;
          return await search(ctx, manager, query, options, values.json === true, viaGateway);
        }
        default:
          throw unknownCommand('memory', action, ['status', 'index', 'search']);
      }
    } finally {
      await manager.stop();
    }
  });
}

async function status(
  ctx: CliContext,
  manager: MemoryCliTarget,
  agentId: string | undefined,
  deep: boolean,
  json: boolean,
): Promise<number> {
  if (deep) await manager.sync(agentId);
  const report = await manager.status({ agentId, deep });
  if (json) {
    ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  const lines = Object.entries(report).flatMap(([key, value]) => {
    if (key === 'indexProgress') return [];
    const text =
      key === 'index'
        ? describeIndex(report)
        : typeof value === 'object' && value !== null
          ? JSON.stringify(value)
          : String(value);
    return [`  ${key.padEnd(16)} ${text}`];
  });
  ctx.stdout.write(`Memory (${String(report.backend)})\n${lines.join('\n')}\n`);
  return 0;
}

/** The index line of `memory status`: complete, or how far a build got and what happens next. */
function describeIndex(report: Record<string, unknown>): string {
  const progress = report.indexProgress as { files: number; filesTotal: number | null } | undefined;
  const done = progress
    ? ` (${progress.files}${progress.filesTotal === null ? '' : ` of ${progress.filesTotal}`} files so far)`
    : '';
  switch (report.index) {
    case 'building':
      return `still being built${done}: searches see only part of memory until it finishes`;
    case 'incomplete':
      return `incomplete${done}: its build was interrupted; \`claw memory index\` finishes it`;
    case 'empty':
      return 'not built yet: `claw memory index` builds it';
    default:
      return String(report.index);
  }
}

async function index(
  ctx: CliContext,
  manager: MemoryCliTarget,
  agentId: string | undefined,
  force: boolean,
  json: boolean,
): Promise<number> {
  const started = Date.now();
  const tty = (ctx.stderr as NodeJS.WriteStream).isTTY === true;
  // A terminal gets a bar redrawn in place; a log or pipe gets a plain line now and then.
  const every = tty ? 100 : 2000;
  let lastDraw = started;
  const draw = (progress: MemorySyncProgress, final = false) => {
    if (json) return;
    const now = Date.now();
    if (!final && now - lastDraw < every) return;
    lastDraw = now;
    const seconds = Math.max(0.001, (now - started) / 1000);
    const line = `${progress.files}/${progress.filesTotal} files · ${progress.chunks} chunks · ${progress.embedded} embedded (${Math.round(progress.embedded / seconds)}/s)`;
    if (!tty) return void ctx.stderr.write(`${line}\n`);
    const width = 24;
    const filled = progress.filesTotal ? Math.round((progress.files / progress.filesTotal) * width) : width;
    ctx.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${line}${final ? '\n' : ''}`);
  };
  let last: MemorySyncProgress | undefined;
  const stats: MemorySyncStats = await manager.sync(agentId, {
    force,
    onProgress: (progress) => {
      last = progress;
      draw(progress);
    },
  });
  if (last) draw({ ...last, files: last.filesTotal }, true);
  if (json) ctx.stdout.write(`${JSON.stringify(stats, null, 2)}\n`);
  else {
    ctx.stdout.write(
      `Indexed ${stats.files} files${stats.rebuilt ? ' (full rebuild)' : ''}: ${stats.indexed} changed, ${stats.skipped} unchanged, ${stats.removed} removed; ${stats.chunks} chunks, ${stats.embedded} embedded, ${stats.cacheHits} from cache, in ${stats.durationMs} ms\n`,
    );
    for (const file of stats.capped ?? [])
      ctx.stdout.write(
        `Note: ${file.path} is ${file.size} bytes, over memorySearch.maxFileBytes: only its first ${file.indexedBytes} bytes are indexed\n`,
      );
  }
  return 0;
}

async function search(
  ctx: CliContext,
  manager: MemoryCliTarget,
  query: string,
  options: { agentId?: string; maxResults?: number; minScore?: number },
  json: boolean,
  viaGateway: boolean,
): Promise<number> {
  const result: MemorySearchResult = viaGateway
    ? await gatewaySearch(ctx, manager, query, options)
    : await manager.search(query, options);
  if (json) {
    ctx.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  }
  const header = `${result.results.length} result${result.results.length === 1 ? '' : 's'} (${result.backend}, ${result.mode}${result.provider ? `, ${result.provider}/${result.model}` : ''})`;
  const lines = [header, ...(result.notice ? [`note: ${result.notice}`] : [])];
  for (const hit of result.results) {
    lines.push(
      '',
      `${hit.path}:${hit.startLine}-${hit.endLine}  score ${hit.score.toFixed(3)}`,
      ...hit.snippet.split('\n').map((line) => `  ${line}`),
    );
  }
  ctx.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

/** The running gateway's memory.search, with this agent's defaults filled in as a local search would. */
async function gatewaySearch(
  ctx: CliContext,
  manager: MemoryCliTarget,
  query: string,
  options: { agentId?: string; maxResults?: number; minScore?: number },
): Promise<MemorySearchResult> {
  const defaults = manager.settings(options.agentId).query;
  const answer = await ctx.gateway.connect({}, (gateway) =>
    gateway.request<GatewaySearchAnswer>('memory.search', {
      query,
      ...(options.agentId ? { agentId: options.agentId } : {}),
      maxResults: options.maxResults ?? defaults.maxResults,
      minScore: options.minScore ?? defaults.minScore,
    }),
  );
  return {
    results: answer.results,
    backend: answer.backend ?? 'unknown',
    mode: answer.mode ?? (answer.searchMode === 'fts-only' ? 'keyword' : 'hybrid'),
    ...(answer.provider && answer.provider !== 'none' ? { provider: answer.provider } : {}),
    ...(answer.model ? { model: answer.model } : {}),
    ...(answer.warning ? { notice: answer.warning } : {}),
  };
}

interface GatewaySearchAnswer {
  results: MemorySearchResult['results'];
  searchMode: string;
  provider?: string;
  warning?: string;
  backend?: string;
  mode?: MemorySearchResult['mode'];
  model?: string;
}
