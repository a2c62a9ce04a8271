/**
 * `/usage`: the per-response usage footer (OpenClaw's modes and precedence) and the local
 * cost summary. A session's `responseUsage` wins (an explicit "off" too); unset, it inherits
 * `messages.responseUsage` (one mode, or a per-channel map with a `default`), then off.
 */
import type { KernelServices } from '../../sdk/index.js';
import type { SessionEntry, TurnResult } from '../../sdk/agent/index.js';
import { addCost, emptyCost, ledgerPath, readLedger, roundUsd, type LedgerEntry } from './usage-ledger.js';

export type UsageMode = 'off' | 'tokens' | 'full';

const MODES: readonly UsageMode[] = ['off', 'tokens', 'full'];
/** OpenClaw's words for clearing the session's choice. */
const RESET_WORDS = new Set(['reset', 'default', 'inherit', 'inherited', 'clear', 'unpin']);

function asMode(value: unknown): UsageMode | undefined {
  if (value === 'on') return 'tokens'; // OpenClaw's legacy spelling
  return MODES.includes(value as UsageMode) ? (value as UsageMode) : undefined;
}

/** What `messages.responseUsage` says for a channel. */
export function configuredMode(kernel: KernelServices, channel: string | undefined): UsageMode | undefined {
  const setting = (kernel.config().messages as { responseUsage?: unknown } | undefined)?.responseUsage;
  if (setting === undefined || typeof setting === 'string') return asMode(setting);
  const map = setting as Record<string, unknown>;
  return asMode((channel ? map[channel] : undefined) ?? map.default);
}

export function effectiveMode(kernel: KernelServices, entry: SessionEntry | undefined, channel?: string): UsageMode {
  return entry?.responseUsage ?? configuredMode(kernel, channel) ?? 'off';
}

export function formatTokens(count: number): string {
  if (count < 1000) return String(count);
  if (count < 1_000_000) return `${(count / 1000).toFixed(1).replace(/\.0$/, '')}k`;
  return `${(count / 1_000_000).toFixed(1).replace(/\.0$/, '')}m`;
}

export function formatUsd(value: number): string {
  return value > 0 && value < 0.01 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

/** The footer line for a turn, or undefined when the mode is off or the models reported nothing. */
export function usageFooter(
  mode: UsageMode,
  turn: Pick<TurnResult, 'messages' | 'provider' | 'model'>,
): string | undefined {
  if (mode === 'off') return undefined;
  let input = 0;
  let output = 0;
  let cacheRead = 0;
  let cacheWrite = 0;
  let calls = 0;
  let unpriced = 0;
  const cost = emptyCost();
  for (const message of turn.messages) {
    if (message.role !== 'assistant' || !message.usage) continue;
    calls++;
    input += message.usage.input;
    output += message.usage.output;
    cacheRead += message.usage.cacheRead ?? 0;
    cacheWrite += message.usage.cacheWrite ?? 0;
    if (message.usage.cost) addCost(cost, message.usage.cost);
    else unpriced++;
  }
  if (calls === 0 || input + output + cacheRead + cacheWrite === 0) return undefined;
  const cache =
    cacheRead > 0 || cacheWrite > 0
      ? ` · cache ${formatTokens(cacheRead)} cached / ${formatTokens(cacheWrite)} new`
      : '';
  const line = `Usage: ${formatTokens(input)} in / ${formatTokens(output)} out${cache}`;
  if (mode === 'tokens') return line;
  const price = unpriced === calls ? 'cost unknown' : `est ${formatUsd(cost.total)}${unpriced ? ' + unpriced' : ''}`;
  const model = turn.model ? ` · ${turn.provider ? `${turn.provider}/` : ''}${turn.model}` : '';
  return `${line} · ${price}${model}`;
}

export type UsageCommand =
  | { kind: 'set'; mode: UsageMode }
  | { kind: 'cycle' }
  | { kind: 'reset' }
  | { kind: 'cost' }
  | { kind: 'invalid'; text: string };

export function parseUsageArgs(args: string): UsageCommand {
  const word = args.trim().toLowerCase();
  if (!word) return { kind: 'cycle' };
  if (word === 'cost') return { kind: 'cost' };
  if (RESET_WORDS.has(word)) return { kind: 'reset' };
  const mode = asMode(word);
  if (mode) return { kind: 'set', mode };
  return { kind: 'invalid', text: `⚠️ /usage: unknown mode "${args.trim()}" (off | tokens | full | cost | reset)` };
}

/** The next mode of bare `/usage`: off → tokens → full → off, from what the user sees now. */
export function nextMode(current: UsageMode): UsageMode {
  return MODES[(MODES.indexOf(current) + 1) % MODES.length]!;
}

interface Sum {
  tokens: number;
  cost: number;
  unpriced: number;
}

function sum(entries: readonly LedgerEntry[]): Sum {
  const out: Sum = { tokens: 0, cost: 0, unpriced: 0 };
  for (const entry of entries) {
    out.tokens += entry.totalTokens;
    out.cost = roundUsd(out.cost + entry.cost.total);
    out.unpriced += entry.missingCostEntries;
  }
  return out;
}

function localDay(ms: number): string {
  const date = new Date(ms);
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

/** `/usage cost`: this session, today and the last 30 days (this agent, local calendar days), from the ledger. */
export function costSummary(stateDir: string, agentId: string, sessionId: string | undefined, now: number): string {
  const entries = readLedger(ledgerPath(stateDir, agentId));
  const today = localDay(now);
  const start = new Date(now);
  start.setHours(0, 0, 0, 0);
  start.setDate(start.getDate() - 29);
  const line = (label: string, part: Sum) =>
    `${label}: ${formatUsd(part.cost)} · ${formatTokens(part.tokens)} tokens${part.unpriced ? ` (${part.unpriced} unpriced call${part.unpriced === 1 ? '' : 's'})` : ''}`;
  return [
    '💸 Usage cost',
    line('Session', sum(entries.filter((entry) => entry.sessionId === sessionId))),
    line('Today', sum(entries.filter((entry) => localDay(entry.ts) === today))),
    line('Last 30d', sum(entries.filter((entry) => entry.ts >= start.getTime()))),
  ].join('\n');
}
