/**
 * `sessions.usage`: token usage and cost per session, in OpenClaw's shape, read from the
 * transcripts: every assistant message carries the usage its model call reported and, when
 * the model had a price then, what it cost (the models service prices each call as it is
 * made). A call without a cost counts in `missingCostEntries`, as OpenClaw reports calls it
 * could not price. `usage.cost` sums the same calls per calendar day; `usage.status`
 * (providers' own quota windows) has nothing to report.
 */
import { existsSync } from 'node:fs';
import { ErrorCodes, normalizeAgentId, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import { isMessageEntry, parseSessionKey, type SessionEntry } from '../../sdk/agent/index.js';
import { KEY, type SessionsDeps } from './methods.js';
import { Transcript } from './transcript.js';

const DATE: JsonSchema = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' };

export const USAGE_PARAMS: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    key: KEY,
    agentId: KEY,
    agentScope: { const: 'all' },
    startDate: DATE,
    endDate: DATE,
    mode: { enum: ['utc', 'gateway', 'specific'] },
    timeZone: { type: 'string', minLength: 1 },
    utcOffset: { type: 'string', pattern: '^UTC[+-]\\d{1,2}(?::[0-5]\\d)?$' },
    range: { enum: ['7d', '30d', '90d', '1y', 'all'] },
    // claw keeps one transcript per session id and no family of rotated ids: both group alike.
    groupBy: { enum: ['instance', 'family'] },
    includeHistorical: { type: 'boolean' },
    limit: { type: 'integer', minimum: 1 },
    includeContextWeight: { type: 'boolean' },
  },
};

interface UsageParams {
  key?: string;
  agentId?: string;
  agentScope?: 'all';
  startDate?: string;
  endDate?: string;
  mode?: 'utc' | 'gateway' | 'specific';
  timeZone?: string;
  utcOffset?: string;
  range?: '7d' | '30d' | '90d' | '1y' | 'all';
  limit?: number;
  includeContextWeight?: boolean;
}

type Totals = ReturnType<typeof emptyTotals>;
type Counts = ReturnType<typeof emptyCounts>;

function emptyTotals() {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    totalCost: 0,
    inputCost: 0,
    outputCost: 0,
    cacheReadCost: 0,
    cacheWriteCost: 0,
    missingCostEntries: 0,
  };
}

function emptyCounts() {
  return { total: 0, user: 0, assistant: 0, toolCalls: 0, toolResults: 0, errors: 0 };
}

/** Costs are rounded as they are summed, so adding many calls' fractions of a cent stays comparable. */
function addTotals(into: Totals, from: Totals): void {
  for (const field of Object.keys(into) as Array<keyof Totals>) into[field] = roundUsd(into[field] + from[field]);
}

function roundUsd(value: number): number {
  return Math.round(value * 1e11) / 1e11;
}

function addCounts(into: Counts, from: Counts): void {
  for (const field of Object.keys(into) as Array<keyof Counts>) into[field] += from[field];
}

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

/** A calendar day (YYYY-MM-DD) of an instant, as the request interprets days. */
function dayFormatter(params: UsageParams): (ms: number) => string {
  const mode = params.mode ?? 'utc';
  if (mode === 'utc') return (ms) => new Date(ms).toISOString().slice(0, 10);
  if (mode === 'gateway') return (ms) => localDay(new Date(ms));
  if (params.timeZone) {
    let format: Intl.DateTimeFormat;
    try {
      format = new Intl.DateTimeFormat('en-CA', {
        timeZone: params.timeZone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
      });
    } catch {
      throw invalid(`unknown timeZone "${params.timeZone}"`);
    }
    return (ms) => format.format(new Date(ms));
  }
  if (!params.utcOffset) throw invalid('mode "specific" needs timeZone or utcOffset');
  const [, sign, hours, minutes] = /^UTC([+-])(\d{1,2})(?::(\d{2}))?$/.exec(params.utcOffset)!;
  const offsetMs = (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes ?? 0)) * 60_000;
  return (ms) => new Date(ms + offsetMs).toISOString().slice(0, 10);
}

function localDay(date: Date): string {
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

function shiftDay(day: string, days: number): string {
  const [year, month, date] = day.split('-').map(Number);
  return new Date(Date.UTC(year!, month! - 1, date! + days)).toISOString().slice(0, 10);
}

function validDay(day: string): boolean {
  const [year, month, date] = day.split('-').map(Number);
  const value = new Date(Date.UTC(year!, month! - 1, date!));
  return value.getUTCFullYear() === year && value.getUTCMonth() === month! - 1 && value.getUTCDate() === date;
}

/** The first and last day counted; as OpenClaw, the last 30 days when nothing is given. */
function dayRange(params: UsageParams, today: string): { start: string; end: string; all: boolean } {
  if ((params.startDate === undefined) !== (params.endDate === undefined))
    throw invalid('startDate and endDate must be provided together');
  if (params.startDate && params.endDate) {
    for (const [name, day] of [
      ['startDate', params.startDate],
      ['endDate', params.endDate],
    ] as const) {
      if (!validDay(day)) throw invalid(`invalid ${name}: expected a valid YYYY-MM-DD calendar date`);
    }
    if (params.startDate > params.endDate) throw invalid('startDate must not be after endDate');
    return { start: params.startDate, end: params.endDate, all: false };
  }
  if (params.range === 'all') return { start: '1970-01-01', end: today, all: true };
  const days = { '7d': 7, '30d': 30, '90d': 90, '1y': 365 }[params.range ?? '30d'];
  return { start: shiftDay(today, -(days - 1)), end: today, all: false };
}

interface SessionUsage extends Totals {
  firstActivity?: number;
  lastActivity?: number;
  durationMs?: number;
  activityDates: string[];
  messageCounts: Counts;
  toolUsage: { totalCalls: number; uniqueTools: number; tools: Array<{ name: string; count: number }> };
  modelUsage: Array<{ provider?: string; model?: string; count: number; totals: Totals }>;
  dailyBreakdown: Array<{ date: string; tokens: number; cost: number }>;
  dailyMessageCounts: Array<{ date: string } & Counts>;
}

/** One transcript's usage within the days counted; undefined when nothing happened in them. */
function transcriptUsage(
  file: string,
  dayOf: (ms: number) => string,
  range: { start: string; end: string; all: boolean },
  perDay?: Map<string, Totals>,
): SessionUsage | undefined {
  const totals = emptyTotals();
  const counts = emptyCounts();
  const tools = new Map<string, number>();
  const models = new Map<string, { provider?: string; model?: string; count: number; totals: Totals }>();
  const daily = new Map<string, { tokens: number; cost: number; counts: Counts }>();
  let first: number | undefined;
  let last: number | undefined;
  for (const entry of new Transcript(file).entries()) {
    if (!isMessageEntry(entry)) continue;
    const message = entry.message;
    const at = typeof message.timestamp === 'number' ? message.timestamp : Date.parse(entry.timestamp);
    if (Number.isNaN(at)) {
      if (!range.all) continue;
    } else {
      const day = dayOf(at);
      if (day < range.start || day > range.end) continue;
    }
    const day = Number.isNaN(at) ? undefined : dayOf(at);
    const bucket = day ? (daily.get(day) ?? { tokens: 0, cost: 0, counts: emptyCounts() }) : undefined;
    if (day && bucket) daily.set(day, bucket);
    if (!Number.isNaN(at)) {
      first = first === undefined ? at : Math.min(first, at);
      last = last === undefined ? at : Math.max(last, at);
    }
    const seen = emptyCounts();
    seen.total = 1;
    if (message.role === 'user') seen.user = 1;
    else if (message.role === 'toolResult') {
      seen.toolResults = 1;
      if (message.isError) seen.errors = 1;
    } else {
      seen.assistant = 1;
      if (message.stopReason === 'error' || message.errorMessage) seen.errors = 1;
      for (const part of message.content) {
        if (part.type !== 'toolCall') continue;
        seen.toolCalls++;
        tools.set(part.name, (tools.get(part.name) ?? 0) + 1);
      }
      if (message.usage) {
        const call = emptyTotals();
        call.input = message.usage.input;
        call.output = message.usage.output;
        call.cacheRead = message.usage.cacheRead ?? 0;
        call.cacheWrite = message.usage.cacheWrite ?? 0;
        call.totalTokens = call.input + call.output + call.cacheRead + call.cacheWrite;
        const cost = message.usage.cost;
        if (cost) {
          call.inputCost = cost.input;
          call.outputCost = cost.output;
          call.cacheReadCost = cost.cacheRead;
          call.cacheWriteCost = cost.cacheWrite;
          call.totalCost = cost.total;
        } else call.missingCostEntries = 1;
        addTotals(totals, call);
        const id = `${message.provider ?? ''}/${message.model ?? ''}`;
        const row = models.get(id) ?? {
          ...(message.provider ? { provider: message.provider } : {}),
          ...(message.model ? { model: message.model } : {}),
          count: 0,
          totals: emptyTotals(),
        };
        row.count++;
        addTotals(row.totals, call);
        models.set(id, row);
        if (bucket) {
          bucket.tokens += call.totalTokens;
          bucket.cost += call.totalCost;
        }
        if (day && perDay) {
          const sum = perDay.get(day) ?? emptyTotals();
          addTotals(sum, call);
          perDay.set(day, sum);
        }
      }
    }
    addCounts(counts, seen);
    if (bucket) addCounts(bucket.counts, seen);
  }
  if (counts.total === 0) return undefined;
  const days = [...daily.keys()].sort();
  return {
    ...totals,
    ...(first !== undefined ? { firstActivity: first, lastActivity: last, durationMs: last! - first } : {}),
    activityDates: days,
    messageCounts: counts,
    toolUsage: {
      totalCalls: counts.toolCalls,
      uniqueTools: tools.size,
      tools: [...tools].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count),
    },
    modelUsage: [...models.values()].sort((a, b) => b.totals.totalTokens - a.totals.totalTokens),
    dailyBreakdown: days.map((date) => ({
      date,
      tokens: daily.get(date)!.tokens,
      cost: roundUsd(daily.get(date)!.cost),
    })),
    dailyMessageCounts: days.map((date) => ({ date, ...daily.get(date)!.counts })),
  };
}

interface UsageRow {
  key: string;
  agentId: string;
  updatedAt: number;
  usage: SessionUsage;
  entry: SessionEntry;
}

/** Each session's usage within the requested days; perDay, when given, sums every model call by day. */
async function usageRows(params: UsageParams, deps: SessionsDeps, perDay?: Map<string, Totals>) {
  if (params.agentScope === 'all' && (params.agentId || params.key))
    throw invalid('agentScope=all cannot be combined with key or agentId');
  const dayOf = dayFormatter(params);
  const range = dayRange(params, dayOf(Date.now()));
  const target = params.key
    ? deps.sessions.resolveTarget({
        sessionKey: params.key,
        ...(params.agentId ? { agentId: params.agentId } : {}),
      })
    : undefined;
  const agents = target
    ? [target.agentId]
    : params.agentScope === 'all'
      ? deps.sessions.knownAgents()
      : [normalizeAgentId(params.agentId ?? deps.models.defaultAgent())];
  const rows: UsageRow[] = [];
  for (const agentId of agents) {
    const store = deps.sessions.store(agentId);
    for (const { key, entry } of await store.list()) {
      if (target && key !== target.sessionKey) continue;
      const file = store.transcriptPath(entry.sessionId, parseSessionKey(key).threadId);
      const usage = existsSync(file) ? transcriptUsage(file, dayOf, range, perDay) : undefined;
      if (usage) rows.push({ key, agentId, updatedAt: entry.updatedAt, usage, entry });
    }
  }
  return { range, rows };
}

export function registerUsageMethods(api: PluginApi, deps: SessionsDeps): void {
  api.registerGatewayMethod('sessions.usage', {
    scope: 'operator.read',
    params: USAGE_PARAMS,
    description:
      'Token usage and cost per session from the transcripts (OpenClaw shape); calls of unpriced models count in missingCostEntries.',
    handler: async (params: UsageParams) => {
      const { range, rows } = await usageRows(params, deps);
      rows.sort((a, b) => b.updatedAt - a.updatedAt);
      const totals = emptyTotals();
      const messages = emptyCounts();
      const tools = new Map<string, number>();
      const byModel = new Map<string, { provider?: string; model?: string; count: number; totals: Totals }>();
      const byProvider = new Map<string, { provider: string; count: number; totals: Totals }>();
      const byAgent = new Map<string, Totals>();
      const byChannel = new Map<string, Totals>();
      const daily = new Map<
        string,
        { date: string; tokens: number; cost: number; messages: number; toolCalls: number; errors: number }
      >();
      for (const { agentId, entry, usage } of rows) {
        addTotals(totals, usage);
        addCounts(messages, usage.messageCounts);
        for (const tool of usage.toolUsage.tools) tools.set(tool.name, (tools.get(tool.name) ?? 0) + tool.count);
        for (const row of usage.modelUsage) {
          const model = byModel.get(`${row.provider}/${row.model}`) ?? { ...row, count: 0, totals: emptyTotals() };
          model.count += row.count;
          addTotals(model.totals, row.totals);
          byModel.set(`${row.provider}/${row.model}`, model);
          const provider = byProvider.get(row.provider ?? 'unknown') ?? {
            provider: row.provider ?? 'unknown',
            count: 0,
            totals: emptyTotals(),
          };
          provider.count += row.count;
          addTotals(provider.totals, row.totals);
          byProvider.set(provider.provider, provider);
        }
        for (const [group, id] of [
          [byAgent, agentId],
          [byChannel, entry.channel ?? entry.lastChannel],
        ] as const) {
          if (!id) continue;
          const sum = group.get(id) ?? emptyTotals();
          addTotals(sum, usage);
          group.set(id, sum);
        }
        for (const day of usage.dailyMessageCounts) {
          const bucket = daily.get(day.date) ?? {
            date: day.date,
            tokens: 0,
            cost: 0,
            messages: 0,
            toolCalls: 0,
            errors: 0,
          };
          const breakdown = usage.dailyBreakdown.find((row) => row.date === day.date);
          bucket.tokens += breakdown?.tokens ?? 0;
          bucket.cost = roundUsd(bucket.cost + (breakdown?.cost ?? 0));
          bucket.messages += day.total;
          bucket.toolCalls += day.toolCalls;
          bucket.errors += day.errors;
          daily.set(day.date, bucket);
        }
      }
      const limit = params.limit ?? 50;
      const byTokens = <T extends { totals: Totals }>(list: T[]) =>
        list.sort((a, b) => b.totals.totalTokens - a.totals.totalTokens);
      return {
        updatedAt: Date.now(),
        startDate: range.start,
        endDate: range.end,
        sessions: rows.slice(0, limit).map(({ key, agentId, entry, usage }) => ({
          key,
          ...(entry.label ? { label: entry.label } : {}),
          sessionId: entry.sessionId,
          scope: 'instance',
          updatedAt: entry.updatedAt,
          agentId,
          ...(entry.channel || entry.lastChannel ? { channel: entry.channel ?? entry.lastChannel } : {}),
          ...(entry.chatType ? { chatType: entry.chatType } : {}),
          ...(entry.origin ? { origin: entry.origin } : {}),
          ...(entry.model ? { modelOverride: entry.model } : {}),
          ...(entry.lastModel
            ? {
                modelProvider: entry.lastModel.split('/')[0],
                model: entry.lastModel.slice(entry.lastModel.indexOf('/') + 1),
              }
            : {}),
          usage,
          hasContextWeight: Boolean(entry.systemPromptReport),
          ...(params.includeContextWeight ? { contextWeight: entry.systemPromptReport ?? null } : {}),
        })),
        totals,
        aggregates: {
          sessionCount: rows.length,
          messages,
          tools: {
            totalCalls: messages.toolCalls,
            uniqueTools: tools.size,
            tools: [...tools].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count),
          },
          byModel: byTokens([...byModel.values()]),
          byProvider: byTokens([...byProvider.values()]),
          byAgent: byTokens([...byAgent].map(([agentId, sum]) => ({ agentId, totals: sum }))),
          byChannel: byTokens([...byChannel].map(([channel, sum]) => ({ channel, totals: sum }))),
          daily: [...daily.values()].sort((a, b) => a.date.localeCompare(b.date)),
        },
      };
    },
  });
  api.registerGatewayMethod('usage.cost', {
    scope: 'operator.read',
    // OpenClaw's clients may add range options claw does not know: tolerated.
    params: { ...USAGE_PARAMS, additionalProperties: true },
    description:
      'Token and cost totals per calendar day over the requested days (OpenClaw shape); unpriced calls count in missingCostEntries.',
    handler: async (params: UsageParams) => {
      const perDay = new Map<string, Totals>();
      const { range, rows } = await usageRows(params, deps, perDay);
      const totals = emptyTotals();
      for (const day of perDay.values()) addTotals(totals, day);
      const days = range.all ? [...perDay.keys()].sort() : daysBetween(range.start, range.end);
      return {
        updatedAt: Date.now(),
        days: days.length,
        daily: days.map((date) => ({ date, ...(perDay.get(date) ?? emptyTotals()) })),
        totals,
        // Read from the transcripts on every call: nothing cached, nothing stale.
        cacheStatus: { status: 'fresh', cachedFiles: rows.length, pendingFiles: 0, staleFiles: 0 },
      };
    },
  });

  api.registerGatewayMethod('usage.status', {
    scope: 'operator.read',
    params: { type: 'object' },
    description:
      "Providers' own quota windows (OpenClaw reads them from OAuth providers), empty: claw's providers use API keys that report no quota.",
    handler: () => ({ updatedAt: Date.now(), providers: [] }),
  });
}

/** Every calendar day from start to end, both included. */
function daysBetween(start: string, end: string): string[] {
  const days: string[] = [];
  for (let day = start; day <= end; day = shiftDay(day, 1)) days.push(day);
  return days;
}
