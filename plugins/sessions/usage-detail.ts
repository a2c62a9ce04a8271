/**
 * One session's usage in detail, as OpenClaw's usage view draws it:
 * `sessions.usage.timeseries` (tokens per model call, with running sums, at most 200
 * points) and `sessions.usage.logs` (the conversation as short lines, with each
 * assistant answer's tokens). Read from the transcript, with the cost each call was priced
 * at when it was made (0 for a call of an unpriced model).
 */
import { existsSync } from 'node:fs';
import { ErrorCodes, ProtocolError, type ChatMessage, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import { isMessageEntry, parseSessionKey } from '../../sdk/agent/index.js';
import { KEY, type SessionsDeps } from './methods.js';
import { Transcript } from './transcript.js';

const MAX_POINTS = 200;
const LOG_LIMIT_DEFAULT = 200;
const LOG_LIMIT_MAX = 1000;
const LOG_TEXT_MAX = 2000;

const PARAMS: JsonSchema = {
  type: 'object',
  required: ['key'],
  additionalProperties: false,
  properties: { key: KEY, agentId: KEY, limit: { type: 'integer', minimum: 1 } },
};

interface Point {
  timestamp: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: number;
}

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

/** The session's transcript entries; an error naming the key when it has none. */
async function sessionEntries(deps: SessionsDeps, params: { key: string; agentId?: string }) {
  const { agentId, sessionKey } = deps.sessions.resolveTarget({
    sessionKey: params.key,
    ...(params.agentId ? { agentId: params.agentId } : {}),
  });
  const store = deps.sessions.store(agentId);
  const entry = await store.get(sessionKey);
  const file = entry && store.transcriptPath(entry.sessionId, parseSessionKey(sessionKey).threadId);
  if (!entry || !file || !existsSync(file)) throw invalid(`No transcript found for session: ${params.key}`);
  return { sessionId: entry.sessionId, entries: new Transcript(file).entries().filter(isMessageEntry) };
}

function timeOf(message: ChatMessage, entryTimestamp: string): number {
  return typeof message.timestamp === 'number' ? message.timestamp : Date.parse(entryTimestamp) || 0;
}

/** Every `step` points summed into one, stamped with its last point's time (OpenClaw's downsampling). */
function downsample(points: Point[]): Point[] {
  if (points.length <= MAX_POINTS) return points;
  const step = Math.ceil(points.length / MAX_POINTS);
  const buckets: Point[] = [];
  points.forEach((point, index) => {
    if (index % step === 0)
      buckets.push({ ...point, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 });
    const bucket = buckets.at(-1)!;
    bucket.timestamp = point.timestamp;
    for (const field of ['input', 'output', 'cacheRead', 'cacheWrite', 'totalTokens', 'cost'] as const)
      bucket[field] += point[field];
  });
  return buckets;
}

/** A message as one log line: its text, and a `[Tool: name]` mark for each tool call or result. */
function logText(message: ChatMessage): string {
  const parts: string[] = [];
  if (message.role === 'toolResult') parts.push(`[Tool: ${message.toolName ?? 'tool'}]`, '[Tool Result]');
  const content = message.content as unknown;
  if (typeof content === 'string') parts.push(content);
  else if (Array.isArray(content))
    for (const part of content as Array<{ type?: string; text?: string; name?: string }>) {
      if (part.type === 'text' && part.text) parts.push(part.text);
      else if (part.type === 'toolCall') parts.push(`[Tool: ${part.name ?? 'unknown'}]`);
    }
  const text = parts.join('\n').trim();
  return text.length > LOG_TEXT_MAX ? `${text.slice(0, LOG_TEXT_MAX)}…` : text;
}

export function registerUsageDetailMethods(api: PluginApi, deps: SessionsDeps): void {
  api.registerGatewayMethod('sessions.usage.timeseries', {
    scope: 'operator.read',
    params: PARAMS,
    description:
      "One session's tokens per model call: {sessionId, points: [{timestamp, input, output, cacheRead, cacheWrite, totalTokens, cost, cumulativeTokens, cumulativeCost}]}.",
    handler: async (params: { key: string; agentId?: string }) => {
      const { sessionId, entries } = await sessionEntries(deps, params);
      const points: Point[] = [];
      for (const { message, timestamp } of entries) {
        if (message.role !== 'assistant' || !message.usage) continue;
        const at = timeOf(message, timestamp);
        if (!at) continue;
        const usage = message.usage;
        const cacheRead = usage.cacheRead ?? 0;
        const cacheWrite = usage.cacheWrite ?? 0;
        points.push({
          timestamp: at,
          input: usage.input,
          output: usage.output,
          cacheRead,
          cacheWrite,
          totalTokens: usage.input + usage.output + cacheRead + cacheWrite,
          cost: usage.cost?.total ?? 0,
        });
      }
      points.sort((a, b) => a.timestamp - b.timestamp);
      let cumulativeTokens = 0;
      let cumulativeCost = 0;
      return {
        sessionId,
        points: downsample(points).map((point) => {
          cumulativeTokens += point.totalTokens;
          cumulativeCost = Math.round((cumulativeCost + point.cost) * 1e11) / 1e11;
          return { ...point, cumulativeTokens, cumulativeCost };
        }),
      };
    },
  });

  api.registerGatewayMethod('sessions.usage.logs', {
    scope: 'operator.read',
    params: PARAMS,
    description:
      "One session's messages as log lines, oldest first (newest `limit`, default 200): {logs: [{timestamp, role, content, tokens?, cost?}]}.",
    handler: async (params: { key: string; agentId?: string; limit?: number }) => {
      const limit = Math.min(params.limit ?? LOG_LIMIT_DEFAULT, LOG_LIMIT_MAX);
      const { entries } = await sessionEntries(deps, params);
      const logs = entries
        .map(({ message, timestamp }) => {
          const content = logText(message);
          if (!content) return undefined;
          const usage = message.role === 'assistant' ? message.usage : undefined;
          return {
            timestamp: timeOf(message, timestamp),
            role: message.role,
            content,
            ...(usage
              ? {
                  tokens: usage.input + usage.output + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0),
                  cost: usage.cost?.total ?? 0,
                }
              : {}),
          };
        })
        .filter((log) => log !== undefined)
        .sort((a, b) => a.timestamp - b.timestamp);
      return { logs: logs.slice(-limit) };
    },
  });
}
