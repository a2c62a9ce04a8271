/**
 * The usage ledger: what each run's model calls used and cost, one JSON line per run and
 * model, appended to `<stateDir>/agents/<agentId>/usage/ledger.jsonl` when the run ends
 * (not in sessions/, whose `*.jsonl` files are all transcripts to whoever lists them). The cost is the one each call carried when it was made
 * (the models service prices every call), so a later price change never reprices history;
 * a call of an unpriced model counts in `missingCostEntries`.
 *
 * Crash safety: each line is one write(2) on an O_APPEND descriptor, then fsync. A process
 * killed mid-write can leave at most one torn last line; the reader skips any line that is
 * not a whole entry, and the next append starts on a fresh line so the torn one never
 * swallows it. The ledger outlives session resets and deletions: history stays counted.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE, type ChatMessage } from '../../sdk/index.js';

export const LEDGER_FILE = 'ledger.jsonl';

export interface UsageCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

export interface LedgerEntry {
  /** When the run ended (ms since the epoch). */
  ts: number;
  runId: string;
  agentId: string;
  sessionKey: string;
  sessionId: string;
  channel?: string;
  provider: string;
  model: string;
  /** Model calls this entry sums. */
  calls: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  /** USD of the priced calls, split as OpenClaw splits it. */
  cost: UsageCost;
  /** Calls whose model had no price: their tokens count, their cost is unknown. */
  missingCostEntries: number;
}

export function ledgerPath(stateDir: string, agentId: string): string {
  return join(stateDir, 'agents', agentId, 'usage', LEDGER_FILE);
}

export function roundUsd(value: number): number {
  return Math.round(value * 1e11) / 1e11;
}

export function emptyCost(): UsageCost {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
}

export function addCost(into: UsageCost, from: UsageCost): void {
  for (const field of Object.keys(into) as Array<keyof UsageCost>) into[field] = roundUsd(into[field] + from[field]);
}

/** A run's entries: its assistant messages with usage, summed per provider and model. */
export function runEntries(
  messages: readonly ChatMessage[],
  run: Pick<LedgerEntry, 'runId' | 'agentId' | 'sessionKey' | 'sessionId' | 'channel'>,
  ts: number,
): LedgerEntry[] {
  const byModel = new Map<string, LedgerEntry>();
  for (const message of messages) {
    if (message.role !== 'assistant' || !message.usage) continue;
    const provider = message.provider ?? 'unknown';
    const model = message.model ?? 'unknown';
    const key = `${provider}/${model}`;
    const entry = byModel.get(key) ?? {
      ts,
      ...run,
      provider,
      model,
      calls: 0,
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: emptyCost(),
      missingCostEntries: 0,
    };
    const usage = message.usage;
    entry.calls++;
    entry.input += usage.input;
    entry.output += usage.output;
    entry.cacheRead += usage.cacheRead ?? 0;
    entry.cacheWrite += usage.cacheWrite ?? 0;
    entry.totalTokens = entry.input + entry.output + entry.cacheRead + entry.cacheWrite;
    if (usage.cost) addCost(entry.cost, usage.cost);
    else entry.missingCostEntries++;
    byModel.set(key, entry);
  }
  return [...byModel.values()];
}

/** Append entries as whole lines, fsync'd; a torn last line from a crash is closed off first. */
export function appendEntries(file: string, entries: readonly LedgerEntry[]): void {
  if (entries.length === 0) return;
  ensurePrivateDir(join(file, '..'));
  const fd = openSync(file, 'a+', PRIVATE_FILE_MODE);
  try {
    const data = entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
    writeSync(fd, endsTorn(fd) ? `\n${data}` : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Whether the file's last byte is not a newline: a crash cut the last line short. */
function endsTorn(fd: number): boolean {
  const size = fstatSync(fd).size;
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

function isEntry(value: unknown): value is LedgerEntry {
  const entry = value as LedgerEntry;
  return (
    typeof entry === 'object' &&
    entry !== null &&
    typeof entry.ts === 'number' &&
    typeof entry.agentId === 'string' &&
    typeof entry.sessionKey === 'string' &&
    typeof entry.totalTokens === 'number' &&
    typeof entry.cost?.total === 'number'
  );
}

/** Every whole entry of one ledger file (a torn or foreign line is skipped). */
export function readLedger(file: string): LedgerEntry[] {
  if (!existsSync(file)) return [];
  const out: LedgerEntry[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (isEntry(value)) out.push(value);
    } catch {
      // A line cut short by a crash.
    }
  }
  return out;
}

/** Every agent's entries under a state dir. */
export function readAllLedgers(stateDir: string): LedgerEntry[] {
  const agents = join(stateDir, 'agents');
  if (!existsSync(agents)) return [];
  return readdirSync(agents, { withFileTypes: true })
    .filter((dirent) => dirent.isDirectory())
    .flatMap((dirent) => readLedger(ledgerPath(stateDir, dirent.name)));
}
