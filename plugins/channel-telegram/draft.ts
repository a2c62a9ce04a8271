/**
 * Draft streaming: while the agent writes a reply, one Telegram message shows it growing
 * (sendMessage once, then editMessageText), and the final reply is edited into that same
 * message instead of arriving as a new one. Past 4,096 characters the preview continues in
 * a new message, and each piece of the final reply takes over the next preview message.
 *
 * Telegram allows about one message or edit per second in a chat: edits are spaced
 * EDIT_INTERVAL_MS apart, a 429 pauses the preview for its `retry_after`, and an edit that
 * changes nothing ("message is not modified") is not an error. A short reply that is done
 * before FIRST_PREVIEW_MS never gets a preview: it goes out as one plain message.
 */
import { findBreak, splitForChannel, type Logger } from '../../sdk/index.js';
import { parseReply } from '../../sdk/agent/index.js';
import { sleepAtLeast, type OutboundMessage, type SendResult } from '../../sdk/channels/index.js';
import type { StreamingMode } from './config.js';
import { apiFailure, describeError, isNotModified, toSendError, type TelegramSender } from './send.js';

export const EDIT_INTERVAL_MS = 1000;
export const FIRST_PREVIEW_MS = 1000;
const PAGE_LIMIT = 4096;

/** Where a draft notes the pages it puts up and takes down (previews.ts), so a restart can find them. */
export interface PageNotes {
  add(to: string, threadId: string | undefined, id: number): void;
  remove(to: string, id: number): void;
}

export interface DraftTarget {
  to: string;
  threadId?: string;
  /** Whether the reply's pages quote the inbound message: none, the first page, or all. */
  replyTo?: { messageId: string; mode: 'first' | 'all' };
}

export class DraftReply {
  /** Preview messages, in order, with the text each shows. */
  private readonly pages: Array<{ id: number; text: string }> = [];
  /** Pages the final reply has taken over. */
  private consumed = 0;
  private latest = '';
  /** Block mode: how much of `latest` is shown (advances in draftChunk steps). */
  private shownLength = 0;
  private startedAt?: number;
  private lastCallAt = 0;
  private pausedUntil = 0;
  private timer?: NodeJS.Timeout;
  private inflight?: Promise<void>;
  /** Text changed since the pages last matched it. */
  private dirty = false;
  /** No more preview updates: the final reply arrived, the run ended, or Telegram refused one. */
  private frozen = false;

  constructor(
    private readonly sender: TelegramSender,
    readonly target: DraftTarget,
    private readonly mode: Exclude<StreamingMode, 'off'>,
    private readonly chunk: { minChars: number; maxChars: number },
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
    private readonly notes?: PageNotes,
  ) {}

  /** Preview pages the final reply can still take over. */
  get open(): boolean {
    return this.consumed < this.pages.length;
  }

  /** The reply's text so far. */
  update(raw: string): void {
    if (this.frozen) return;
    const reply = parseReply(raw);
    const text = reply.silent ? '' : reply.text;
    if (this.mode === 'block') {
      if (!text.startsWith(this.latest.slice(0, this.shownLength))) this.shownLength = 0;
      this.shownLength = advance(text, this.shownLength, this.chunk);
    }
    this.latest = text;
    this.dirty = true;
    this.startedAt ??= this.now();
    this.schedule();
  }

  private visible(): string {
    return this.mode === 'block' ? this.latest.slice(0, this.shownLength).trimEnd() : this.latest;
  }

  private replyFor(page: number): string | undefined {
    const reply = this.target.replyTo;
    return reply && (reply.mode === 'all' || page === 0) ? reply.messageId : undefined;
  }

  private schedule(): void {
    if (this.timer || this.inflight || this.frozen || !this.dirty) return;
    const at = Math.max(
      this.lastCallAt + EDIT_INTERVAL_MS,
      this.pausedUntil,
      this.pages.length === 0 ? (this.startedAt ?? 0) + FIRST_PREVIEW_MS : 0,
    );
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.inflight = this.step().finally(() => {
          this.inflight = undefined;
          this.schedule();
        });
      },
      Math.max(0, at - this.now()),
    );
    this.timer.unref?.();
  }

  /** One Bot API call: the first page that differs from what it should show. */
  private async step(): Promise<void> {
    if (this.frozen) return;
    const wanted = this.visible().trim() ? splitForChannel(this.visible(), PAGE_LIMIT) : [];
    const index = wanted.findIndex((text, page) => this.pages[page]?.text !== text);
    // Everything shown already: nothing to call until the next update.
    if (index === -1) {
      this.dirty = false;
      return;
    }
    this.lastCallAt = this.now();
    try {
      if (index < this.pages.length) {
        await this.sender.editPreview(this.target.to, this.pages[index]!.id, wanted[index]!);
        this.pages[index]!.text = wanted[index]!;
      } else {
        const id = await this.sender.sendPreview(
          this.target.to,
          wanted[index]!,
          this.target.threadId,
          this.replyFor(index),
        );
        this.notes?.add(this.target.to, this.target.threadId, id);
        this.pages.push({ id, text: wanted[index]! });
      }
    } catch (error) {
      if (isNotModified(error) && index < this.pages.length) {
        this.pages[index]!.text = wanted[index]!;
        return;
      }
      const failure = apiFailure(error);
      if (failure?.error_code === 429) {
        this.pausedUntil = this.now() + (failure.parameters?.retry_after ?? 1) * 1000;
        this.logger.debug(`telegram: preview edits paused for ${failure.parameters?.retry_after ?? 1} s (429)`);
        return;
      }
      // The preview is a nicety: the final reply still goes out, as a new message if need be.
      this.logger.warn(`telegram: stopped previewing a reply in ${this.target.to}: ${describeError(error)}`);
      this.frozen = true;
    }
  }

  /**
   * One piece of the final reply. Takes over the next preview page when the piece is text
   * that page can become; undefined when it must be sent as a message of its own.
   */
  async finish(piece: OutboundMessage): Promise<SendResult | undefined> {
    this.frozen = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inflight;
    const page = this.pages[this.consumed];
    if (!page || piece.media?.length || !piece.text?.trim() || piece.replyTo !== this.replyFor(this.consumed))
      return this.rateLimitPassed();
    // The final edit keeps the same pace as the preview: a 429's retry_after, then the edit interval.
    const wait = Math.max(this.pausedUntil, this.lastCallAt + EDIT_INTERVAL_MS) - this.now();
    if (wait > 0) await sleepAtLeast(wait);
    this.lastCallAt = this.now();
    try {
      await this.sender.finishPreview(this.target.to, page.id, piece.text);
    } catch (error) {
      const failure = apiFailure(error);
      // Rate limits and outages: the kernel retries this piece, which finds the page again.
      if (failure?.error_code === 429) this.pausedUntil = this.now() + (failure.parameters?.retry_after ?? 1) * 1000;
      if (!failure || failure.error_code === 429 || failure.error_code >= 500)
        throw toSendError(error, 'editMessageText');
      // The page is gone (deleted by the user) or cannot take this text: send it anew.
      this.logger.warn(
        `telegram: could not finish a reply preview in ${this.target.to} (${describeError(error)}); sending it as a new message`,
      );
      this.consumed++;
      this.notes?.remove(this.target.to, page.id);
      return undefined;
    }
    this.consumed++;
    this.notes?.remove(this.target.to, page.id);
    return { messageId: String(page.id) };
  }

  /** Resolves once a 429 this draft received has run out: it holds for a new message as much as an edit. */
  private async rateLimitPassed(): Promise<undefined> {
    const wait = this.pausedUntil - this.now();
    if (wait > 0) await sleepAtLeast(wait);
    return undefined;
  }

  /** The run is over: preview pages no final piece took over are deleted. */
  async close(): Promise<void> {
    this.frozen = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inflight;
    for (const page of this.pages.splice(this.consumed)) {
      await this.sender
        .deleteMessage(this.target.to, page.id)
        .catch((error: unknown) =>
          this.logger.warn(
            `telegram: could not delete a stale reply preview in ${this.target.to}: ${describeError(error)}`,
          ),
        );
      this.notes?.remove(this.target.to, page.id);
    }
  }
}

/** Block mode: advance what is shown by draftChunk steps at the chunker's preferred breaks. */
function advance(text: string, shown: number, chunk: { minChars: number; maxChars: number }): number {
  let at = shown;
  while (text.length - at >= chunk.minChars) {
    const rest = text.slice(at);
    const cut =
      findBreak(rest, chunk.minChars, chunk.maxChars) ?? (rest.length > chunk.maxChars ? chunk.maxChars : undefined);
    if (cut === undefined) break;
    at += cut;
  }
  return at;
}
