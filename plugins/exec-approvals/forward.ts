/**
 * OpenClaw's `approvals.exec`: an exec approval request is also posted to chats, where an
 * authorized sender answers with `/approve <id> allow-once|allow-always|deny`. `mode` says
 * where: "session" — the chat the requesting session last talked to; "targets" — the listed
 * `{channel, to}`; "both". `agentFilter` (agent ids) and `sessionFilter` (substrings or
 * regexes of the session key) narrow which requests go out. It goes through the kernel's
 * outbound choke point, so message_sending hooks and send policy apply as to any reply.
 *
 * `approvals.plugin` has the same shape; claw raises no plugin approvals (no plugin asks for
 * permission), so that section is validated and has nothing to forward.
 */
import type { KernelServices, PluginApi } from '../../sdk/index.js';
import type { SessionEntry } from '../../sdk/sessions/index.js';
import type { PendingApproval } from './service.js';

export interface ForwardTarget {
  channel: string;
  to: string;
  accountId?: string;
  threadId?: string | number;
}

export interface ForwardingConfig {
  enabled?: boolean;
  mode?: 'session' | 'targets' | 'both';
  agentFilter?: string[];
  sessionFilter?: string[];
  targets?: ForwardTarget[];
}

/** Surfaces with no chat to post to: their operators see exec.approval.requested on the gateway. */
const NO_CHAT = new Set(['gateway', 'cli']);

/** A session-key pattern: a regex when it compiles, always also a plain substring. */
function keyMatches(pattern: string, key: string): boolean {
  if (key.includes(pattern)) return true;
  try {
    return new RegExp(pattern).test(key);
  } catch {
    return false;
  }
}

/** Whether `config` forwards a request from this agent and session at all. */
export function forwardsRequest(config: ForwardingConfig | undefined, agentId: string, sessionKey?: string): boolean {
  if (!config?.enabled) return false;
  if (config.agentFilter?.length && !config.agentFilter.includes(agentId)) return false;
  if (config.sessionFilter?.length && !config.sessionFilter.some((pattern) => keyMatches(pattern, sessionKey ?? '')))
    return false;
  return true;
}

/** The chat a session's replies go to when no inbound message names one. */
function sessionChat(entry: SessionEntry | undefined): ForwardTarget | undefined {
  const context = entry?.deliveryContext;
  const channel = context?.channel ?? entry?.lastChannel;
  const to = context?.to ?? entry?.lastTo;
  if (!channel || !to || NO_CHAT.has(channel)) return undefined;
  const accountId = context?.accountId ?? entry?.lastAccountId;
  const threadId = context?.threadId ?? entry?.lastThreadId;
  return { channel, to, ...(accountId ? { accountId } : {}), ...(threadId !== undefined ? { threadId } : {}) };
}

/** Where a request goes: the session's chat and/or the targets, each chat once. */
export function forwardTargets(config: ForwardingConfig, session: SessionEntry | undefined): ForwardTarget[] {
  const mode = config.mode ?? 'session';
  const wanted: ForwardTarget[] = [];
  const own = mode !== 'targets' ? sessionChat(session) : undefined;
  if (own) wanted.push(own);
  if (mode !== 'session') wanted.push(...(config.targets ?? []));
  const seen = new Set<string>();
  return wanted.filter((target) => {
    const id = JSON.stringify([target.channel, target.to, target.accountId ?? '', String(target.threadId ?? '')]);
    return !seen.has(id) && (seen.add(id), true);
  });
}

export function approvalText(approval: PendingApproval, now = Date.now()): string {
  const { id, request } = approval;
  const seconds = Math.max(0, Math.round((approval.expiresAtMs - now) / 1000));
  return [
    `🔐 Exec approval needed (${id})`,
    `Agent ${request.agentId}${request.sessionKey ? ` · session ${request.sessionKey}` : ''}`,
    `Command: ${request.command}`,
    `Directory: ${request.cwd}`,
    ...(request.warnings ?? []).map((warning) => `⚠️ ${warning}`),
    `Expires in ${seconds} s. Reply: /approve ${id} allow-once | allow-always | deny`,
  ].join('\n');
}

/**
 * Posts `approval` where `approvals.exec` says; resolves to how many chats took it (0: none
 * configured, filtered out, or every send failed — each failure is logged, never thrown).
 */
export async function forwardApproval(
  kernel: Pick<KernelServices, 'config' | 'channels' | 'redact'>,
  logger: PluginApi['logger'],
  approval: PendingApproval,
  session: () => Promise<SessionEntry | undefined>,
): Promise<number> {
  const config = (kernel.config() as { approvals?: { exec?: ForwardingConfig } }).approvals?.exec;
  const { agentId, sessionKey } = approval.request;
  if (!config || !forwardsRequest(config, agentId, sessionKey)) return 0;
  const mode = config.mode ?? 'session';
  const entry = mode !== 'targets' && sessionKey ? await session().catch(() => undefined) : undefined;
  const text = kernel.redact.text(approvalText(approval));
  let sent = 0;
  for (const target of forwardTargets(config, entry)) {
    try {
      const result = await kernel.channels.send({
        channel: target.channel,
        to: target.to,
        ...(target.accountId ? { accountId: target.accountId } : {}),
        ...(target.threadId !== undefined ? { threadId: String(target.threadId) } : {}),
        text,
        context: { agentId, ...(sessionKey ? { sessionKey } : {}), channel: target.channel },
      });
      if (result.delivered && !result.cancelled) sent++;
    } catch (error) {
      logger.warn(`could not forward the exec approval request: ${(error as Error).message}`, {
        channel: target.channel,
        approval: approval.id,
      });
    }
  }
  return sent;
}
