/**
 * On /new or /reset: the ending session's last user and assistant messages, saved to
 * <workspace>/memory/YYYY-MM-DD-HHMM.md (temp file + rename, owner-only).
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface SessionEntryLike {
  sessionId?: string;
}

interface ResetEvent {
  type: string;
  action: string;
  sessionKey: string;
  timestamp: Date;
  context: {
    cfg?: {
      agents?: { defaults?: { userTimezone?: string } };
      hooks?: { internal?: { entries?: Record<string, { messages?: unknown }> } };
    };
    workspaceDir?: string;
    sessionFile?: string;
    previousSessionEntry?: SessionEntryLike;
    senderId?: string;
    commandSource?: string;
  };
}

/** Bounds on what is read from the old transcript. */
const MAX_BYTES = 8 * 1024 * 1024;
const MAX_SCANNED = 4096;

/** The tail of the transcript (at most MAX_BYTES), as complete lines. */
function tailLines(file: string): string[] {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - MAX_BYTES);
    const buffer = Buffer.alloc(size - start);
    readSync(fd, buffer, 0, buffer.length, start);
    const lines = buffer.toString('utf8').split('\n');
    if (start > 0) lines.shift();
    return lines;
  } finally {
    closeSync(fd);
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      part && typeof part === 'object' && (part as { type?: string }).type === 'text'
        ? String((part as { text?: unknown }).text ?? '')
        : '',
    )
    .join('');
}

export function recentConversation(file: string, limit: number): Array<{ role: 'user' | 'assistant'; text: string }> {
  const out: Array<{ role: 'user' | 'assistant'; text: string }> = [];
  for (const line of tailLines(file).slice(-MAX_SCANNED)) {
    let entry: { type?: string; message?: { role?: string; content?: unknown } };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const role = entry.message?.role;
    if (entry.type !== 'message' || (role !== 'user' && role !== 'assistant')) continue;
    const text = textOf(entry.message!.content).trim();
    if (!text || (role === 'user' && text.startsWith('/'))) continue;
    out.push({ role, text });
  }
  return out.slice(-limit);
}

function stamp(date: Date, timeZone: string | undefined): { day: string; time: string } {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(date);
  const get = (type: string) => parts.find((part) => part.type === type)?.value ?? '';
  return { day: `${get('year')}-${get('month')}-${get('day')}`, time: `${get('hour')}${get('minute')}` };
}

export default async function sessionMemory(event: ResetEvent): Promise<void> {
  if (event.type !== 'command' || (event.action !== 'new' && event.action !== 'reset')) return;
  const { context } = event;
  if (!context.workspaceDir) return;
  const option = context.cfg?.hooks?.internal?.entries?.['session-memory']?.messages;
  const limit = typeof option === 'number' && Number.isInteger(option) && option > 0 ? option : 15;

  let conversation: Array<{ role: 'user' | 'assistant'; text: string }> | undefined;
  if (context.sessionFile && existsSync(context.sessionFile)) {
    try {
      conversation = recentConversation(context.sessionFile, limit);
    } catch {
      conversation = undefined;
    }
  }
  if (conversation !== undefined && conversation.length === 0) return;

  let timeZone = context.cfg?.agents?.defaults?.userTimezone ?? process.env.TZ;
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone });
  } catch {
    timeZone = undefined;
  }
  const { day, time } = stamp(event.timestamp, timeZone);
  const dir = join(context.workspaceDir, 'memory');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let name = `${day}-${time}.md`;
  for (let n = 2; existsSync(join(dir, name)); n++) name = `${day}-${time}-${n}.md`;

  const lines = [
    `# Session saved ${day} ${time.slice(0, 2)}:${time.slice(2)}`,
    '',
    `- Session key: ${event.sessionKey}`,
    `- Session id: ${context.previousSessionEntry?.sessionId ?? 'unknown'}`,
    `- Ended by: /${event.action} from ${context.senderId ?? 'unknown'} (${context.commandSource ?? 'unknown'})`,
    '',
    conversation === undefined
      ? '_The transcript could not be read._'
      : `## Conversation (last ${conversation.length} messages)`,
  ];
  for (const message of conversation ?? [])
    lines.push('', `**${message.role === 'user' ? 'User' : 'Assistant'}:** ${message.text}`);
  const target = join(dir, name);
  const temp = join(dir, `.${name}.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(temp, `${lines.join('\n')}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(temp, target);
}
