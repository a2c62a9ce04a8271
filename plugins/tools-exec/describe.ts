/** How a session is shown: one-line notes for the model, summaries for `details`. */
import type { ProcessSession, SessionStatus } from './session.js';

export interface SessionSummary {
  sessionId: string;
  command: string;
  status: SessionStatus;
  pid: number | null;
  cwd: string;
  startedAt: string;
  endedAt?: string;
  durationMs: number;
  exitCode: number | null;
  signal: string | null;
  /** Characters of output produced so far (including any dropped from the middle). */
  outputChars: number;
  error?: string;
}

export function summarize(session: ProcessSession): SessionSummary {
  return {
    sessionId: session.id,
    command: session.command,
    status: session.status,
    pid: session.pid ?? null,
    cwd: session.cwd,
    startedAt: new Date(session.startedAt).toISOString(),
    ...(session.endedAt === undefined ? {} : { endedAt: new Date(session.endedAt).toISOString() }),
    durationMs: session.durationMs,
    exitCode: session.exitCode,
    signal: session.signal,
    outputChars: session.output.total,
    ...(session.error === undefined ? {} : { error: session.error }),
  };
}

/** A bracketed note on how the command stands, or how it ended. */
export function statusNote(session: ProcessSession): string {
  switch (session.status) {
    case 'running':
      return `[still running after ${formatDuration(session.durationMs)}]`;
    case 'completed':
      return '[exit code 0]';
    case 'failed':
      return session.error !== undefined ? `[failed to start: ${session.error}]` : `[exit code ${session.exitCode}]`;
    case 'killed':
      return `[killed${session.signal ? ` by ${session.signal}` : ''}]`;
    case 'timeout':
      return `[timed out after ${formatDuration(session.timeoutMs)}; the command and its child processes were killed]`;
    case 'aborted':
      return '[aborted; the command and its child processes were killed]';
  }
}

export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return ms < 1000 ? `${ms}ms` : `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

export function shortCommand(command: string, max = 80): string {
  const flat = command.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
