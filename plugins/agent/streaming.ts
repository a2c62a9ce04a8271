/**
 * What a run shows while it runs: `agent` events (lifecycle, assistant text, tools) and
 * `chat` events for UIs, to the caller's onEvent and to every gateway client; chat deltas
 * coalesced; block streaming, where a long answer goes out in blocks while it is written;
 * and the silent token held back from all of them.
 */
import { BlockChunker, type KernelServices } from '../../sdk/index.js';
import {
  parseReply,
  type AgentStream,
  type DispatchInput,
  type ReplyPayload,
  type RunResult,
  type VerboseLevel,
} from '../../sdk/agent/index.js';
import { SilentReplyFilter } from './silent-reply.js';

const CHAT_DELTA_THROTTLE_MS = 150;

/** The `agent` and `chat` event streams, numbered in one sequence. */
export class RunEvents {
  private seq = 0;

  constructor(
    private readonly kernel: KernelServices,
    private readonly now: () => number,
  ) {}

  emitAgent(
    input: DispatchInput,
    runId: string,
    sessionKey: string,
    stream: AgentStream,
    data: Record<string, unknown>,
  ): void {
    const event = { runId, sessionKey, seq: ++this.seq, stream, ts: this.now(), data };
    input.onEvent?.({ kind: 'agent', ...event });
    this.kernel.protocol.emit('agent', event, { droppable: stream === 'assistant' });
  }

  chatEvent(
    input: DispatchInput,
    runId: string,
    sessionKey: string,
    state: 'delta' | 'final' | 'aborted' | 'error',
    text: string,
    extra: { deltaText?: string; errorMessage?: string } = {},
  ): void {
    const seq = ++this.seq;
    input.onEvent?.({ kind: 'chat', runId, sessionKey, seq, state, text, ...extra });
    this.kernel.protocol.emit(
      'chat',
      {
        runId,
        sessionKey,
        seq,
        state,
        message: { role: 'assistant', content: [{ type: 'text', text }], timestamp: this.now() },
        ...(extra.deltaText !== undefined ? { deltaText: extra.deltaText } : {}),
        ...(extra.errorMessage ? { errorMessage: extra.errorMessage } : {}),
      },
      { droppable: state === 'delta' },
    );
  }
}

/** Chat events for UIs: deltas coalesced to one per 150 ms, then final / aborted / error. */
export class ChatStream {
  /** The current model message's text: the final answer is one message, so a delta is too. */
  private text = '';
  private pending = '';
  private timer?: NodeJS.Timeout;
  private messageEnded = false;

  constructor(
    private readonly events: RunEvents,
    private readonly input: DispatchInput,
    private readonly runId: string,
    private readonly sessionKey: string,
  ) {}

  onAssistant(data: Record<string, unknown>): void {
    if (data.reset) {
      this.text = '';
      this.pending = '';
      this.messageEnded = false;
      return;
    }
    if (typeof data.delta === 'string' && data.delta) {
      if (this.messageEnded) {
        this.text = '';
        this.messageEnded = false;
      }
      this.text += data.delta;
      this.pending += data.delta;
      this.timer ??= setTimeout(() => this.flush(), CHAT_DELTA_THROTTLE_MS);
    }
    if (data.messageEnd) {
      // Text written before a tool call goes out now; the next message starts afresh.
      clearTimeout(this.timer);
      this.flush();
      this.messageEnded = true;
    }
  }

  private flush(): void {
    this.timer = undefined;
    if (!this.pending) return;
    const deltaText = this.pending;
    this.pending = '';
    this.events.chatEvent(this.input, this.runId, this.sessionKey, 'delta', this.text, { deltaText });
  }

  finish(result: RunResult): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (result.status === 'ok') this.events.chatEvent(this.input, this.runId, this.sessionKey, 'final', result.text);
    else if (result.status === 'aborted')
      this.events.chatEvent(this.input, this.runId, this.sessionKey, 'aborted', this.text);
    else
      this.events.chatEvent(this.input, this.runId, this.sessionKey, 'error', this.text, {
        errorMessage: result.error ?? result.status,
      });
  }
}

/** Sends one reply through the one delivery path; `payload` is what went out when it was delivered. */
type SendBlock = (
  reply: ReplyPayload,
) => Promise<{ status: 'delivered'; payload: ReplyPayload } | { status: 'skipped' | 'failed' }>;

/**
 * Block streaming (`agents.defaults.blockStreamingDefault: "on"`): a long answer goes out
 * in blocks of 800–1200 characters while it is written, each through the one delivery
 * path. What is buffered is sent when a model message ends; a failed attempt's unsent text
 * is dropped.
 */
export class BlockDelivery {
  private chunker: BlockChunker;
  private chain: Promise<void> = Promise.resolve();
  readonly sent: ReplyPayload[] = [];

  constructor(
    private readonly send: SendBlock,
    private readonly limits: { minChars: number; maxChars: number },
  ) {
    this.chunker = new BlockChunker(limits.minChars, limits.maxChars);
  }

  onAssistant(data: Record<string, unknown>): void {
    if (data.reset) {
      this.chunker = new BlockChunker(this.limits.minChars, this.limits.maxChars);
      return;
    }
    if (typeof data.delta === 'string') this.enqueue(this.chunker.push(data.delta));
    if (data.messageEnd) this.enqueue(this.chunker.flush());
  }

  private enqueue(blocks: string[]): void {
    for (const block of blocks) {
      const reply = parseReply(block);
      if (reply.silent || (!reply.text && reply.media.length === 0)) continue;
      this.chain = this.chain.then(async () => {
        const outcome = await this.send(reply);
        if (outcome.status === 'delivered') this.sent.push(outcome.payload);
      });
    }
  }

  async finish(): Promise<void> {
    this.enqueue(this.chunker.flush());
    await this.chain;
  }
}

/** The agent stream with the silent token held back from every listener: UIs, SSE, the CLI, blocks. */
export function withoutSilentToken(
  emit: (stream: AgentStream, data: Record<string, unknown>) => void,
): (stream: AgentStream, data: Record<string, unknown>) => void {
  const silence = new SilentReplyFilter();
  return (stream, data) => {
    if (stream !== 'assistant') return emit(stream, data);
    for (const item of silence.filter(data)) emit(stream, item);
  };
}

/** What `/verbose on` shows for a tool call: its name and a short form of its arguments. */
export function toolAnnouncement(data: Record<string, unknown>, verbose: VerboseLevel): string {
  const args = JSON.stringify(data.args ?? {});
  const limit = verbose === 'full' ? 2000 : 120;
  return `🛠️ ${String(data.name)} ${args.length > limit ? `${args.slice(0, limit)}…` : args}`;
}
