/**
 * What follows a sessions_send between two sessions (OpenClaw's agent-to-agent flow): once
 * the target has answered, the requester and the target take turns answering each other,
 * up to `session.agentToAgent.maxPingPongTurns` (0-5, default 5) — either side ends it by
 * replying exactly REPLY_SKIP. Then the target gets one announce turn: its answer is posted
 * to the target session's chat, unless it is exactly ANNOUNCE_SKIP (or the session's send
 * policy denies it). Every step is a normal run through the agent service, in the `nested`
 * lane, with slash commands off, and its reply goes to no chat by itself.
 */
import { randomUUID } from 'node:crypto';
import type { KernelServices } from '../../sdk/index.js';
import type { AgentService, SessionEntry, SessionService } from '../../sdk/agent/index.js';

export const REPLY_SKIP = 'REPLY_SKIP';
export const ANNOUNCE_SKIP = 'ANNOUNCE_SKIP';
export const DEFAULT_MAX_PING_PONG_TURNS = 5;
/** The lane agent-to-agent runs use, so a caller waiting in `main` cannot starve them. */
export const A2A_LANE = 'nested';

export interface A2AEnds {
  requester: { agentId: string; sessionKey: string; channel?: string };
  target: { agentId: string; sessionKey: string };
}

export function maxPingPongTurns(config: object): number {
  const value = (
    (config as { session?: unknown }).session as { agentToAgent?: { maxPingPongTurns?: unknown } } | undefined
  )?.agentToAgent?.maxPingPongTurns;
  if (typeof value !== 'number' || !Number.isFinite(value)) return DEFAULT_MAX_PING_PONG_TURNS;
  return Math.max(0, Math.min(5, Math.floor(value)));
}

/** Context for the target's first turn: who is asking, so it treats the text as another agent's words. */
export function messageContext(ends: A2AEnds): string {
  return [
    'Agent-to-agent message: the user message of this turn was sent by another agent through sessions_send, not by a person.',
    `Sender: agent "${ends.requester.agentId}", session ${ends.requester.sessionKey}${ends.requester.channel ? ` (channel ${ends.requester.channel})` : ''}.`,
    `You: agent "${ends.target.agentId}", session ${ends.target.sessionKey}.`,
    'Your reply goes back to the sender.',
  ].join('\n');
}

function replyContext(ends: A2AEnds, role: 'requester' | 'target', turn: number, turns: number): string {
  const other = role === 'requester' ? ends.target : ends.requester;
  return [
    `Agent-to-agent exchange, reply turn ${turn} of at most ${turns}.`,
    `The user message of this turn is the latest reply of agent "${other.agentId}" (session ${other.sessionKey}), not a person's message.`,
    `You are the ${role === 'requester' ? 'agent that started this exchange' : 'agent that was asked'}. Your reply goes back to the other agent.`,
    `If nothing more needs saying, reply with exactly ${REPLY_SKIP} to end the exchange.`,
  ].join('\n');
}

function announceContext(original: string, firstReply: string, latestReply: string): string {
  return [
    'Agent-to-agent announce turn: the exchange with the other agent is over.',
    `The request was:\n${original}`,
    `Your first reply was:\n${firstReply}`,
    `The latest reply in the exchange was:\n${latestReply}`,
    `Your answer to this turn is posted to this session's chat. Reply with exactly ${ANNOUNCE_SKIP} to post nothing.`,
  ].join('\n\n');
}

function isExactly(text: string, token: string): boolean {
  return text.trim() === token;
}

export interface A2AOutcome {
  /** Reply turns that ran after the first reply. */
  turns: number;
  endedBy: 'skip' | 'limit' | 'empty';
  announced: boolean;
  announceSkipped?: 'skip' | 'empty' | 'no-channel' | 'send-policy' | 'failed';
}

/** The ping-pong and announce steps; resolves when both are done (callers do not wait). */
export async function runA2AFlow(
  kernel: KernelServices,
  agent: AgentService,
  sessions: Pick<SessionService, 'sendPolicy'>,
  ends: A2AEnds,
  original: string,
  firstReply: string,
  targetEntry: () => Promise<SessionEntry | undefined>,
  timeoutMs: number,
): Promise<A2AOutcome> {
  const step = async (
    at: { agentId: string; sessionKey: string },
    message: string,
    extraSystemPrompt: string,
  ): Promise<string> => {
    const result = await agent.run({
      agentId: at.agentId,
      sessionKey: at.sessionKey,
      message,
      extraSystemPrompt,
      authorized: false,
      queueMode: 'followup',
      lane: A2A_LANE,
      timeoutMs,
    });
    return result.status === 'ok' ? result.text.trim() : '';
  };
  const turns = maxPingPongTurns(kernel.config());
  let latest = firstReply;
  let ran = 0;
  let endedBy: A2AOutcome['endedBy'] = 'limit';
  // A caller outside any session (an RPC) has no side to answer from: only the announce runs.
  if (ends.requester.sessionKey && ends.requester.sessionKey !== ends.target.sessionKey) {
    let role: 'requester' | 'target' = 'requester';
    for (let turn = 1; turn <= turns; turn++) {
      const reply = await step(ends[role], latest, replyContext(ends, role, turn, turns));
      ran = turn;
      if (!reply) {
        endedBy = 'empty';
        break;
      }
      if (isExactly(reply, REPLY_SKIP)) {
        endedBy = 'skip';
        break;
      }
      latest = reply;
      role = role === 'requester' ? 'target' : 'requester';
    }
  }
  const announce = await step(
    ends.target,
    'Agent-to-agent announce step.',
    announceContext(original, firstReply, latest),
  );
  const outcome = { turns: ran, endedBy };
  if (!announce) return { ...outcome, announced: false, announceSkipped: 'empty' };
  if (isExactly(announce, ANNOUNCE_SKIP)) return { ...outcome, announced: false, announceSkipped: 'skip' };
  const entry = await targetEntry();
  const where =
    entry?.deliveryContext?.channel && entry.deliveryContext.to
      ? entry.deliveryContext
      : entry?.lastChannel && entry.lastTo
        ? { channel: entry.lastChannel, to: entry.lastTo, accountId: entry.lastAccountId, threadId: entry.lastThreadId }
        : undefined;
  if (!where?.channel || !where.to) return { ...outcome, announced: false, announceSkipped: 'no-channel' };
  if (sessions.sendPolicy({ sessionKey: ends.target.sessionKey, entry }) === 'deny')
    return { ...outcome, announced: false, announceSkipped: 'send-policy' };
  const sent = await kernel.channels.send({
    channel: where.channel,
    to: where.to,
    text: announce,
    ...(where.accountId ? { accountId: where.accountId } : {}),
    ...(where.threadId !== undefined ? { threadId: String(where.threadId) } : {}),
    context: {
      agentId: ends.target.agentId,
      sessionKey: ends.target.sessionKey,
      runId: randomUUID(),
      channel: where.channel,
    },
  });
  return sent.delivered ? { ...outcome, announced: true } : { ...outcome, announced: false, announceSkipped: 'failed' };
}
