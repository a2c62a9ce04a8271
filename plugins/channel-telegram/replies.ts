/**
 * What one account does around each reply: the acknowledgement reaction on the message
 * being answered (and taking it back, with `messages.removeAckAfterReply`), and the draft
 * that shows the reply as it is written. Outbound pieces to a chat with an open draft
 * finish it in place (see draft.ts); everything else is sent as usual.
 */
import type { Logger } from '../../sdk/index.js';
import type {
  AckReaction,
  InboundMessage,
  OutboundMessage,
  ReplyObserver,
  SendResult,
} from '../../sdk/channels/index.js';
import type { TelegramAccountSettings } from './config.js';
import { DraftReply } from './draft.js';
import { describeError, type TelegramSender } from './send.js';
import { takeOverPages, type PreviewLedger } from './previews.js';

const draftKey = (to: string, threadId: string | undefined) => `${to}\u0000${threadId ?? ''}`;

export class ReplyTracker {
  /** Drafts by chat (and topic), oldest first: runs of one chat follow one another. */
  private readonly drafts = new Map<string, DraftReply[]>();

  constructor(
    private readonly settings: TelegramAccountSettings,
    private readonly sender: TelegramSender,
    private readonly logger: Logger,
    /** Preview pages up in chats, kept across restarts. */
    private readonly ledger?: PreviewLedger,
  ) {}

  /** The pipeline hands `message` to the agent. */
  started(message: InboundMessage, ack: AckReaction): ReplyObserver | undefined {
    const to = message.peer.id;
    const emoji = this.settings.reactions ? ack.emoji : undefined;
    if (emoji)
      void this.sender
        .react(to, message.messageId, emoji)
        .catch((error: unknown) =>
          this.logger.warn(
            `telegram: could not react to message ${message.messageId} in ${to}: ${describeError(error)}`,
          ),
        );
    const draft = this.settings.streaming === 'off' ? undefined : this.openDraft(message);
    if (!emoji && !draft) return undefined;
    return {
      ...(draft ? { preview: (text: string) => draft.update(text) } : {}),
      done: async () => {
        if (draft) {
          await draft.close();
          this.forget(draft);
        }
        if (emoji && ack.removeAfterReply)
          await this.sender
            .react(to, message.messageId, undefined)
            .catch((error: unknown) =>
              this.logger.warn(
                `telegram: could not remove the reaction on message ${message.messageId} in ${to}: ${describeError(error)}`,
              ),
            );
      },
    };
  }

  private openDraft(message: InboundMessage): DraftReply {
    const mode = this.settings.replyToMode;
    const draft = new DraftReply(
      this.sender,
      {
        to: message.peer.id,
        ...(message.threadId ? { threadId: message.threadId } : {}),
        ...(mode !== 'off' ? { replyTo: { messageId: message.messageId, mode } } : {}),
      },
      this.settings.streaming as 'partial' | 'block',
      this.settings.draftChunk,
      this.logger,
      Date.now,
      this.ledger,
    );
    const key = draftKey(message.peer.id, message.threadId);
    this.drafts.set(key, [...(this.drafts.get(key) ?? []), draft]);
    return draft;
  }

  private forget(draft: DraftReply): void {
    const key = draftKey(draft.target.to, draft.target.threadId);
    const left = (this.drafts.get(key) ?? []).filter((other) => other !== draft);
    if (left.length > 0) this.drafts.set(key, left);
    else this.drafts.delete(key);
  }

  /** One outbound piece: into the chat's open draft when it can take it, else sent as usual. */
  async send(message: OutboundMessage): Promise<SendResult> {
    const drafts = this.drafts.get(draftKey(message.to, message.threadId)) ?? [];
    const draft = drafts.find((candidate) => candidate.open);
    // A draft that never got a page up (its first preview was refused) is still told the reply
    // is here: it must not put a preview up after it, and its 429 holds this send back too.
    const finished = draft ? await draft.finish(message) : undefined;
    if (!draft) for (const other of drafts) await other.finish(message);
    // No draft of this process: pages a previous one left in this chat take the reply instead of a second copy.
    const taken =
      finished ??
      (!draft && this.ledger ? await takeOverPages(this.ledger, this.sender, message, this.logger) : undefined);
    return taken ?? this.sender.send(message);
  }
}
