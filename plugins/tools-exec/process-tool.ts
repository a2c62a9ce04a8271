/** The `process` tool: look after commands that exec left running in the background. */
import {
  errorResult,
  sandboxOf,
  textResult,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from '../../sdk/index.js';
import { ParamError, guard, optionalBoolean, optionalNumber, optionalString, requiredString } from './args.js';
import { formatDuration, shortCommand, statusNote, summarize } from './describe.js';
import type { SessionRegistry } from './registry.js';
import { KILL_GRACE_MS, MAX_TIMER_MS, type ProcessSession } from './session.js';

const ACTIONS = ['list', 'poll', 'log', 'write', 'kill'] as const;
type Action = (typeof ACTIONS)[number];

/** Lines `log` returns when no limit is given. */
const DEFAULT_LOG_LINES = 200;

type Params = Record<string, unknown>;

export function createProcessTool(registry: SessionRegistry): ToolDefinition<Params> {
  return {
    name: 'process',
    label: 'Process',
    runsInSandbox: true,
    description:
      'Manage commands exec moved to the background. list: all sessions with their status. ' +
      'poll: output since the last poll and the status (timeout waits up to that many ms for something new). ' +
      `log: the captured output by lines (offset = lines to skip, limit = lines to return; default the last ${DEFAULT_LOG_LINES}). ` +
      "write: send data to the command's stdin (eof: true closes it). kill: stop the command and everything it started.",
    parameters: {
      type: 'object',
      additionalProperties: false,
      properties: {
        action: { type: 'string', enum: [...ACTIONS], description: 'What to do' },
        sessionId: { type: 'string', description: 'Session id from exec (every action but list)' },
        offset: { type: 'integer', minimum: 0, description: 'log: lines to skip from the start' },
        limit: { type: 'integer', minimum: 1, description: 'log: most lines to return' },
        data: { type: 'string', description: 'write: text to send to stdin (include "\\n" to end a line)' },
        eof: { type: 'boolean', description: 'write: close stdin after sending data' },
        timeout: {
          type: 'integer',
          minimum: 0,
          description: 'poll: milliseconds to wait for new output or the end of the command',
        },
      },
      required: ['action'],
    },
    execute: (params, ctx) => guard('process', () => runAction(params, ctx, registry)),
  };
}

async function runAction(params: Params, ctx: ToolContext, registry: SessionRegistry): Promise<ToolResult> {
  const action = requiredString(params, 'action') as Action;
  if (!ACTIONS.includes(action)) throw new ParamError(`unknown action "${action}"; use one of ${ACTIONS.join(', ')}`);
  const place = sandboxOf(ctx)?.id ?? 'host';
  if (action === 'list') return list(registry.list(ctx.agentId, place));

  const sessionId = optionalString(params, 'sessionId');
  if (!sessionId) throw new ParamError(`"sessionId" is required for action "${action}"`);
  const session = registry.get(sessionId, ctx.agentId, place);
  if (!session)
    return errorResult(
      `process: no session "${sessionId}" (it may have ended long ago; action "list" shows the sessions)`,
    );

  switch (action) {
    case 'poll':
      return poll(session, optionalNumber(params, 'timeout', { minimum: 0, integer: true }) ?? 0, ctx.signal);
    case 'log':
      return log(
        session,
        optionalNumber(params, 'offset', { minimum: 0, integer: true }),
        optionalNumber(params, 'limit', { minimum: 1, integer: true }),
      );
    case 'write':
      return write(session, optionalString(params, 'data') ?? '', optionalBoolean(params, 'eof') ?? false);
    case 'kill':
      return kill(session);
  }
}

function list(sessions: ProcessSession[]): ToolResult {
  if (sessions.length === 0) return textResult('No background sessions.', { sessions: [] });
  const rows = sessions.map((session) => {
    const state = session.running ? 'running' : `${session.status} ${statusNote(session)}`;
    return `${session.id}  ${state}  pid ${session.pid ?? '-'}  ${formatDuration(session.durationMs)}  ${shortCommand(session.command)}`;
  });
  return textResult(rows.join('\n'), { sessions: sessions.map(summarize) });
}

async function poll(session: ProcessSession, timeoutMs: number, signal: AbortSignal | undefined): Promise<ToolResult> {
  if (timeoutMs > 0 && session.running && session.output.total === session.pollCursor) {
    await nextChange(session, timeoutMs, signal);
  }
  const { text, omitted } = session.output.since(session.pollCursor);
  const newChars = session.output.total - session.pollCursor;
  session.pollCursor = session.output.total;
  return textResult(`${text || '(no new output)'}\n\n${statusNote(session)}`, {
    ...summarize(session),
    newChars,
    omittedChars: omitted,
  });
}

/** Waits for output, the end of the command, the timeout or an abort, whichever comes first. */
function nextChange(session: ProcessSession, timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.min(timeoutMs, MAX_TIMER_MS));
    const unsubscribe = session.subscribe(done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

function log(session: ProcessSession, offset: number | undefined, limit: number | undefined): ToolResult {
  const text = session.output.text();
  const lines = text === '' ? [] : text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const total = lines.length;
  const count = limit ?? DEFAULT_LOG_LINES;
  const from = offset ?? Math.max(0, total - count);
  const shown = lines.slice(from, from + count);
  const range =
    shown.length > 0
      ? `lines ${from + 1}-${from + shown.length} of ${total}`
      : `no lines after line ${from} (${total} in all)`;
  const body = total === 0 ? '(no output)' : shown.join('\n');
  return textResult(`${body}\n\n[${range}] ${statusNote(session)}`, {
    sessionId: session.id,
    status: session.status,
    totalLines: total,
    offset: from,
    returnedLines: shown.length,
    omittedChars: session.output.omitted,
  });
}

function write(session: ProcessSession, data: string, eof: boolean): ToolResult {
  if (data === '' && !eof) throw new ParamError('"data" is required for action "write" (or eof: true to close stdin)');
  const problem = session.write(data, eof);
  if (problem) return errorResult(`process: ${problem}`, summarize(session));
  const bytes = Buffer.byteLength(data);
  return textResult(`Wrote ${bytes} bytes to session ${session.id}${eof ? ' and closed its stdin' : ''}.`, {
    sessionId: session.id,
    bytes,
    eof,
  });
}

async function kill(session: ProcessSession): Promise<ToolResult> {
  if (!session.running) {
    return textResult(`Session ${session.id} had already ended ${statusNote(session)}.`, summarize(session));
  }
  session.stop('killed');
  await Promise.race([session.done, new Promise((resolve) => setTimeout(resolve, KILL_GRACE_MS + 1000).unref())]);
  const text = session.running
    ? `Sent SIGTERM and SIGKILL to session ${session.id}, but it has not exited yet.`
    : `Killed session ${session.id} (${shortCommand(session.command)}).`;
  return textResult(text, summarize(session));
}
