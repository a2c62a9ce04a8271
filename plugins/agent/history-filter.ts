/**
 * What chat.history leaves out, as OpenClaw's Control UI and WebChat do: heartbeat prompts,
 * and the whole of a heartbeat turn whose reply is only an acknowledgment (HEARTBEAT_OK). An
 * alert stays visible. The transcript itself keeps everything, for audit and for the model.
 */
import { HEARTBEAT_ORIGIN, judgeReply } from '../../sdk/agent/index.js';

interface Message {
  role: string;
  content?: unknown;
  origin?: string;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : ''))
    .join('');
}

export function withoutHeartbeatNoise<T extends Message>(messages: readonly T[], ackMaxChars: number): T[] {
  const out: T[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== 'user' || message.origin !== HEARTBEAT_ORIGIN) {
      out.push(message);
      continue;
    }
    // The heartbeat's turn: everything up to the next user message.
    let end = i + 1;
    while (end < messages.length && messages[end]!.role !== 'user') end++;
    const reply = messages
      .slice(i + 1, end)
      .reverse()
      .find((other) => other.role === 'assistant');
    if (judgeReply(textOf(reply?.content), ackMaxChars).kind !== 'alert') i = end - 1;
  }
  return out;
}

/** `ackMaxChars` for an agent: its own heartbeat block over `agents.defaults.heartbeat`. */
export function ackMaxCharsFor(config: Record<string, unknown>, agentId: string, fallback: number): number {
  const agents = (config.agents ?? {}) as {
    defaults?: { heartbeat?: { ackMaxChars?: number } };
    list?: Array<{ id?: string; heartbeat?: { ackMaxChars?: number } }>;
  };
  const own = agents.list?.find((entry) => entry?.id?.toLowerCase() === agentId.toLowerCase())?.heartbeat?.ackMaxChars;
  return own ?? agents.defaults?.heartbeat?.ackMaxChars ?? fallback;
}
