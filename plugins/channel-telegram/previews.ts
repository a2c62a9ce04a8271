/**
 * Reply preview pages that are up in a chat, remembered across restarts. While a reply is
 * written, its draft shows it in a Telegram message (draft.ts); when the process dies
 * before the final reply took that message over, the page would stay behind, half
 * written, and the reply the restarted gateway delivers would arrive as a second copy.
 * So every page is noted here the moment Telegram returns its id, and forgotten once the
 * final reply took it over or it was deleted. After a restart, the next reply to that chat
 * takes the pages over (the first shows the reply, the rest are deleted); pages no reply
 * claims within ORPHAN_TTL_MS of the start are deleted.
 *
 * One small JSON file per account (`<stateDir>/channels/telegram/previews-<account>.json`,
 * 0600), replaced atomically on each change, owned by the process that writes it (the
 * gateway): another process that finds its owner alive (`claw message send` beside a
 * running gateway) only reads it, and claims nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { writeFileAtomic, type Logger, lockHolderAlive, ownProcessStartTime, type LockOwner } from '../../sdk/index.js';
import type { OutboundMessage, SendResult } from '../../sdk/channels/index.js';
import { describeError, type TelegramSender } from './send.js';

/** How long after this process read them the pages a previous process left wait for a reply to take them over. */
export const ORPHAN_TTL_MS = 10 * 60_000;

export interface PreviewPage {
  to: string;
  threadId?: string;
  id: number;
  at: number;
}

const chatOf = (to: string, threadId: string | undefined) => `${to}\u0000${threadId ?? ''}`;

export function previewsFile(stateDir: string, accountId: string): string {
  return join(stateDir, 'channels', 'telegram', `previews-${encodeURIComponent(accountId)}.json`);
}

export class PreviewLedger {
  private pages: PreviewPage[] = [];
  /** Pages a previous process left, by chat: the next reply there takes them over. */
  private readonly orphans = new Map<string, PreviewPage[]>();
  private readonly loadedAt: number;
  /** Another live process owns the file: this one neither writes it nor claims its pages. */
  private readonly readOnly: boolean = false;

  constructor(
    private readonly file: string,
    private readonly now: () => number = Date.now,
  ) {
    this.loadedAt = now();
    let stored: { owner?: LockOwner; pages?: unknown } | undefined;
    try {
      stored = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      return; // None yet, or torn: at worst a stale preview stays in a chat.
    }
    const owner = stored?.owner;
    const mine = owner?.pid === process.pid && owner?.pidStartTime === ownProcessStartTime();
    if (owner && !mine && lockHolderAlive(owner)) {
      this.readOnly = true;
      return;
    }
    const pages = stored?.pages;
    if (!Array.isArray(pages)) return;
    for (const page of pages as PreviewPage[]) {
      if (typeof page?.to !== 'string' || !Number.isInteger(page.id)) continue;
      this.pages.push(page);
      const key = chatOf(page.to, page.threadId);
      this.orphans.set(key, [...(this.orphans.get(key) ?? []), page]);
    }
  }

  /** A draft put a page up. */
  add(to: string, threadId: string | undefined, id: number): void {
    if (this.readOnly) return;
    this.pages.push({ to, ...(threadId ? { threadId } : {}), id, at: this.now() });
    this.save();
  }

  /** The page became the final reply, or was deleted. */
  remove(to: string, id: number): void {
    if (this.readOnly) return;
    const before = this.pages.length;
    this.pages = this.pages.filter((page) => !(page.to === to && page.id === id));
    for (const [key, list] of this.orphans) {
      const left = list.filter((page) => !(page.to === to && page.id === id));
      if (left.length) this.orphans.set(key, left);
      else this.orphans.delete(key);
    }
    if (this.pages.length !== before) this.save();
  }

  /** Pages a previous process left in this chat, oldest first; they are no longer offered to anyone else. */
  claim(to: string, threadId: string | undefined): PreviewPage[] {
    const key = chatOf(to, threadId);
    const pages = this.orphans.get(key) ?? [];
    this.orphans.delete(key);
    return pages;
  }

  /** Left-over pages no reply claimed in time (all of them, once ORPHAN_TTL_MS have passed since the start). */
  expired(): PreviewPage[] {
    if (this.now() - this.loadedAt < ORPHAN_TTL_MS) return [];
    const out = [...this.orphans.values()].flat();
    this.orphans.clear();
    return out;
  }

  /** Whether pages a previous process left are still waiting. */
  get hasOrphans(): boolean {
    return this.orphans.size > 0;
  }

  private save(): void {
    const owner: LockOwner = { pid: process.pid, hostname: hostname(), pidStartTime: ownProcessStartTime() };
    writeFileAtomic(this.file, `${JSON.stringify({ owner, pages: this.pages })}\n`, { mode: 0o600, fsync: false });
  }
}

/**
 * The first piece of a reply to a chat where a previous process left preview pages: the
 * first page becomes this piece (it may show part of this very reply), the others are
 * deleted. Undefined when there are none, or the piece must be sent anew (media, no text,
 * or the page is gone).
 */
export async function takeOverPages(
  ledger: PreviewLedger,
  sender: TelegramSender,
  piece: OutboundMessage,
  logger: Logger,
): Promise<SendResult | undefined> {
  const pages = ledger.claim(piece.to, piece.threadId);
  if (pages.length === 0) return undefined;
  const [first, ...rest] = pages;
  let result: SendResult | undefined;
  if (piece.text?.trim() && !piece.media?.length) {
    try {
      await sender.finishPreview(piece.to, first!.id, piece.text);
      ledger.remove(first!.to, first!.id);
      result = { messageId: String(first!.id) };
    } catch (error) {
      logger.warn(
        `telegram: could not take over a reply preview a previous run left in ${piece.to} (${describeError(error)}); sending the reply anew`,
      );
    }
  }
  for (const page of result ? rest : pages) await deletePage(ledger, sender, page, logger);
  return result;
}

/** Delete a left-over page (it is forgotten even when Telegram refuses: it may be gone already). */
export async function deletePage(
  ledger: PreviewLedger,
  sender: TelegramSender,
  page: PreviewPage,
  logger: Logger,
): Promise<void> {
  await sender
    .deleteMessage(page.to, page.id)
    .catch((error: unknown) =>
      logger.warn(
        `telegram: could not delete a reply preview a previous run left in ${page.to}: ${describeError(error)}`,
      ),
    );
  ledger.remove(page.to, page.id);
}
