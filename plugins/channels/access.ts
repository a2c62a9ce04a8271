/**
 * Who may talk to the assistant on a channel.
 *
 * Direct messages follow `dmPolicy`: `pairing` (default — an unknown sender gets a code,
 * valid one hour, that the owner approves with `claw pairing approve <channel> <code>`; at
 * most three codes wait per channel), `allowlist` (unknown senders are dropped), `open`
 * (anyone; config must say so with "*" in allowFrom), `disabled`. Approved senders are
 * kept in `<stateDir>/credentials/<channel>-allowFrom.json` and join config's allowFrom.
 * Groups follow `groupPolicy` (`allowlist` by default: the group, or the sender, must be in
 * groupAllowFrom or have an entry in `groups`) and then mention gating.
 */
import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic, type InboundMessage, type PairingRequest } from '../../sdk/index.js';
import type { ChannelSettings } from '../../sdk/channels/index.js';

export const PAIRING_TTL_MS = 60 * 60_000;
export const MAX_PENDING_PAIRINGS = 3;
// No 0/O or 1/I: codes are read aloud and typed from phones.
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;

export type { PairingRequest };

interface PairingFile {
  version: 1;
  requests: PairingRequest[];
}

interface AllowFile {
  version: 1;
  allowFrom: string[];
}

export type DmDecision =
  { allow: true } | { allow: false; reason: string; pairing?: { code: string; created: boolean } };
export type GroupDecision = { allow: true; requireMention: boolean } | { allow: false; reason: string };

function normalizeId(value: string): string {
  return value.trim().replace(/^@/, '').toLowerCase();
}

/** Does an allowFrom list name this sender? ("*", the id, the @username, or "<channel>:<id>".) */
export function allowListed(list: readonly string[], channel: string, sender: InboundMessage['sender']): boolean {
  const names = new Set([sender.id, sender.username ?? ''].filter(Boolean).map(normalizeId));
  return list.some((entry) => {
    const item = normalizeId(entry);
    if (item === '*') return true;
    const scoped = item.startsWith(`${channel.toLowerCase()}:`) ? item.slice(channel.length + 1) : item;
    return names.has(scoped);
  });
}

export class ChannelAccess {
  constructor(
    private readonly stateDir: string,
    private readonly now: () => number = Date.now,
  ) {}

  private file(channel: string, kind: 'pairing' | 'allowFrom'): string {
    return join(this.stateDir, 'credentials', `${channel}-${kind}.json`);
  }

  private read<T>(file: string, fallback: T): T {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as T;
    } catch {
      return fallback;
    }
  }

  private write(file: string, value: unknown): void {
    writeJsonAtomic(file, value);
  }

  /** Senders approved through pairing (the credentials file). */
  approvedSenders(channel: string): string[] {
    return this.read<AllowFile>(this.file(channel, 'allowFrom'), { version: 1, allowFrom: [] }).allowFrom ?? [];
  }

  /** Unexpired pairing requests (all channels when none is named). */
  pending(channel?: string): PairingRequest[] {
    const channels = channel ? [channel] : this.channelsWithFiles();
    const now = this.now();
    return channels.flatMap((name) =>
      this.read<PairingFile>(this.file(name, 'pairing'), { version: 1, requests: [] }).requests.filter(
        (request) => request.expiresAt > now,
      ),
    );
  }

  private channelsWithFiles(): string[] {
    try {
      return readdirSync(join(this.stateDir, 'credentials'))
        .filter((name) => name.endsWith('-pairing.json'))
        .map((name) => name.slice(0, -'-pairing.json'.length));
    } catch {
      return [];
    }
  }

  /** The pending code for this sender, or a new one (unless the channel has three waiting). */
  requestPairing(
    channel: string,
    accountId: string,
    sender: InboundMessage['sender'],
  ): { code: string; created: boolean } | undefined {
    const now = this.now();
    const file = this.file(channel, 'pairing');
    const requests = this.read<PairingFile>(file, { version: 1, requests: [] }).requests.filter(
      (request) => request.expiresAt > now,
    );
    const existing = requests.find((request) => request.accountId === accountId && request.senderId === sender.id);
    if (existing) return { code: existing.code, created: false };
    if (requests.length >= MAX_PENDING_PAIRINGS) return undefined;
    let code: string;
    do code = Array.from({ length: CODE_LENGTH }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
    while (requests.some((request) => request.code === code));
    requests.push({
      code,
      channel,
      accountId,
      senderId: sender.id,
      senderName: sender.name ?? sender.username,
      createdAt: now,
      expiresAt: now + PAIRING_TTL_MS,
    });
    this.write(file, { version: 1, requests });
    return { code, created: true };
  }

  /** Approve a code: the sender joins the channel's allowFrom file. Undefined when no such code waits. */
  approve(channel: string, code: string): PairingRequest | undefined {
    const file = this.file(channel, 'pairing');
    const now = this.now();
    const requests = this.read<PairingFile>(file, { version: 1, requests: [] }).requests.filter(
      (request) => request.expiresAt > now,
    );
    const wanted = code.trim().toUpperCase();
    const match = requests.find((request) => request.code === wanted);
    if (!match) return undefined;
    const allowFile = this.file(channel, 'allowFrom');
    const allow = new Set(this.approvedSenders(channel));
    allow.add(match.senderId);
    this.write(allowFile, { version: 1, allowFrom: [...allow] });
    this.write(file, { version: 1, requests: requests.filter((request) => request !== match) });
    return match;
  }

  /**
   * Remove the first waiting request `pick` chooses, without approving it: the sender stays
   * unpaired (their next message asks again). Undefined when none is picked.
   */
  dismiss(channel: string, pick: (request: PairingRequest) => boolean): PairingRequest | undefined {
    const file = this.file(channel, 'pairing');
    const requests = this.pending(channel);
    const match = requests.find(pick);
    if (!match) return undefined;
    this.write(file, { version: 1, requests: requests.filter((request) => request !== match) });
    return match;
  }

  /** The DM policy's verdict for a sender. */
  checkDm(settings: ChannelSettings, sender: InboundMessage['sender']): DmDecision {
    if (settings.dmPolicy === 'disabled')
      return { allow: false, reason: 'direct messages are disabled on this channel (dmPolicy "disabled")' };
    const allowFrom = [...settings.allowFrom, ...this.approvedSenders(settings.channel)];
    if (settings.dmPolicy === 'open') {
      return allowFrom.includes('*')
        ? { allow: true }
        : { allow: false, reason: 'dmPolicy "open" needs "*" in allowFrom' };
    }
    if (allowListed(allowFrom, settings.channel, sender)) return { allow: true };
    if (settings.dmPolicy === 'allowlist') return { allow: false, reason: `sender ${sender.id} is not in allowFrom` };
    const pairing = this.requestPairing(settings.channel, settings.accountId, sender);
    if (!pairing)
      return {
        allow: false,
        reason: `sender ${sender.id} is unknown and ${MAX_PENDING_PAIRINGS} pairing requests are already waiting`,
      };
    return { allow: false, reason: `sender ${sender.id} is not paired yet`, pairing };
  }

  /** The group policy's verdict (mention gating is decided by the caller from `requireMention`). */
  checkGroup(settings: ChannelSettings, groupId: string, sender: InboundMessage['sender']): GroupDecision {
    // A JID-style id ("120363…@g.us") is also found under its part before "@".
    const bareId = groupId.includes('@') ? groupId.slice(0, groupId.indexOf('@')) : groupId;
    const group = settings.groups[groupId] ?? settings.groups[bareId];
    const wildcard = settings.groups['*'];
    if (settings.groupPolicy === 'disabled' || group?.enabled === false)
      return { allow: false, reason: 'group messages are disabled here' };
    const requireMention = group?.requireMention ?? wildcard?.requireMention ?? true;
    if (settings.groupPolicy === 'open') return { allow: true, requireMention };
    const groupListed =
      group !== undefined ||
      settings.groupAllowFrom.some(
        (entry) =>
          normalizeId(entry) === normalizeId(groupId) || normalizeId(entry) === normalizeId(bareId) || entry === '*',
      );
    if (groupListed || allowListed(settings.groupAllowFrom, settings.channel, sender))
      return { allow: true, requireMention };
    return { allow: false, reason: `group ${groupId} is not in groupAllowFrom or groups (groupPolicy "allowlist")` };
  }

  /** May this sender run slash commands? Explicitly listed senders (not "*") and paired ones. */
  isOwner(settings: ChannelSettings, sender: InboundMessage['sender']): boolean {
    const explicit = [
      ...settings.allowFrom,
      ...settings.groupAllowFrom,
      ...this.approvedSenders(settings.channel),
    ].filter((entry) => entry !== '*');
    return allowListed(explicit, settings.channel, sender);
  }
}
