/**
 * WebChat: talk to the assistant.
 *
 * A conversation this browser started goes through the `webchat` channel (`webchat.send`):
 * the kernel's pipeline applies access rules and hooks and answers in the session it
 * derives, which the outcome names together with the run id. The run then streams as
 * `chat` events for that session — deltas, then final, aborted or error — and the reply the
 * channel delivers arrives as a `webchat.message` for this browser's client id.
 *
 * Other sessions (another channel's, a cron job's) can be opened from the list; writing
 * there uses `chat.send` as the operator, since WebChat is not their channel.
 */
import { every, onReconnect, type View } from '../app.js';
import { outcomeText, type ApprovalOutcome } from '../approvals.js';
import { errorBox, errorMessage, formatAgo, formatTime, h, loadingBox, randomId, replace } from '../dom.js';
import { renderMarkdown } from '../markdown.js';
import { loadJson, saveJson } from '../storage.js';
import { toolCard } from './tool-card.js';

interface SessionRow {
  key: string;
  label?: string;
  displayName?: string;
  updatedAt: number;
  hasActiveRun?: boolean;
  lastChannel?: string;
}

type Part = {
  type: string;
  text?: string;
  name?: string;
  mimeType?: string;
  data?: string;
  id?: string;
  arguments?: Record<string, unknown>;
};

interface HistoryMessage {
  role: 'user' | 'assistant' | 'toolResult';
  content: string | Part[];
  timestamp?: number;
  errorMessage?: string;
  stopReason?: string;
  /** On a toolResult: the call it answers. */
  toolCallId?: string;
  isError?: boolean;
}

/** An `agent` event of the tool stream: a call starts, then its result comes. */
interface ToolEvent {
  runId: string;
  sessionKey: string;
  stream: string;
  data: {
    phase?: string;
    toolCallId?: string;
    name?: string;
    args?: Record<string, unknown>;
    isError?: boolean;
    durationMs?: number;
    result?: string;
    /** On the assistant stream: the model failed and the next of the chain answers instead. */
    failover?: { from: string; to: string; cause: string };
  };
}

interface ChatEvent {
  runId: string;
  sessionKey: string;
  state: 'delta' | 'final' | 'aborted' | 'error';
  message?: { content?: Part[] };
  errorMessage?: string;
}

interface WebchatMessage {
  id: string;
  to: string;
  text: string;
  media: Array<{ url: string }>;
  threadId?: string;
  ts: number;
}

type Outcome =
  | { status: 'dispatched'; sessionKey: string; runId: string }
  | { status: 'duplicate' }
  | { status: 'pairing'; code: string; created: boolean }
  | { status: 'blocked' | 'history'; reason: string };

interface Conversation {
  /** Unknown for a new chat until its first message is accepted. */
  key?: string;
  /** The browser's own thread on the webchat channel (none: its main thread). */
  threadId?: string;
  via: 'webchat' | 'operator';
}

interface Attachment {
  mimeType: string;
  fileName: string;
  dataUrl: string;
}

/** Session key → thread id ("" for the main thread) of conversations WebChat started here. */
const KNOWN_KEY = 'claw.webchat.conversations';
const CURRENT_KEY = 'claw.webchat.current';
/** Session key → the first thing said in it, as its title. */
const TITLES_KEY = 'claw.webchat.titles';
const MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024;
/** The gateway's cap on an audio attachment. */
const MAX_VOICE_BYTES = 20 * 1024 * 1024;

function textOf(content: string | Part[] | undefined): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
}

export const chatView: View = {
  title: 'Chat',
  mount(root, app, params) {
    const { gw, clientId } = app;
    const known = loadJson<Record<string, string>>(KNOWN_KEY, {});
    const titles = loadJson<Record<string, string>>(TITLES_KEY, {});
    const mainKey = String(
      (gw.hello?.snapshot as { sessionDefaults?: { mainSessionKey?: string } })?.sessionDefaults?.mainSessionKey ??
        'agent:main:main',
    );
    if (known[mainKey] === undefined) known[mainKey] = '';

    let conversation: Conversation = pickInitial();
    let attachments: Attachment[] = [];
    /** Runs we wait for (accepted, no text yet), runs with text streaming in, runs that ended. */
    const pending = new Set<string>();
    const streaming = new Map<string, { item: HTMLElement; body: HTMLElement; text: string }>();
    /** A run's text from before its latest tool call: an abort repeats it, and it is not shown twice. */
    const sealed = new Map<string, { item: HTMLElement; body: HTMLElement; text: string }>();
    const finished = new Set<string>();
    /** Tool calls shown, by call id, so a result finds its card. */
    const toolCards = new Map<string, ReturnType<typeof toolCard>>();
    /** This conversation's exec approval requests shown in the thread, by request id. */
    const approvalItems = new Map<string, { item: HTMLElement; command: string }>();
    /** Events seen lately, replayed when a send tells us which session and run are ours. */
    const recent: Array<{ chat: ChatEvent } | { tool: ToolEvent }> = [];
    /** Delivered messages that arrived while a reply was streaming (usually that same reply). */
    let held: WebchatMessage[] = [];
    /** chat.history said a run was going when we opened the session. */
    let activeOnOpen = false;

    // ── Layout ───────────────────────────────────────────────────────────────────
    const list = h(
      'ul',
      { class: 'conv-list', 'aria-busy': 'true' },
      h('li', null, loadingBox('Loading conversations…')),
    );
    const sidebar = h(
      'aside',
      {
        class: 'conversations',
        id: 'conversations',
        'aria-label': 'Conversations',
        onkeydown: (event: KeyboardEvent) => event.key === 'Escape' && (setSidebar(false), toggle.focus()),
      },
      h(
        'div',
        { class: 'conv-head' },
        h('h2', null, 'Conversations'),
        h('button', { type: 'button', class: 'primary', onclick: () => newChat() }, 'New chat'),
      ),
      list,
    );
    const toggle = h(
      'button',
      {
        type: 'button',
        class: 'conv-toggle',
        'aria-controls': 'conversations',
        'aria-expanded': 'false',
        onclick: () => {
          const open = !root.classList.contains('show-conversations');
          setSidebar(open);
          // The list comes before the thread in the page: take the keyboard to it rather than Shift+Tab back.
          if (open)
            (list.querySelector<HTMLElement>('[aria-current="true"]') ?? sidebar.querySelector('button'))?.focus();
        },
      },
      'Conversations',
    );
    const title = h('h1', { tabindex: '-1' });
    const hint = h('p', { class: 'thread-hint' });
    const stop = h(
      'button',
      { type: 'button', class: 'danger stop', hidden: true, onclick: () => void abort() },
      '■ Stop',
    );
    const messages = h('ol', { class: 'messages', role: 'log', 'aria-label': 'Messages' });
    const empty = h(
      'div',
      { class: 'empty-chat' },
      h('p', { class: 'empty-title' }, 'How can I help?'),
      h('p', null, 'Messages go to your assistant through the gateway. Replies stream in as they are written.'),
    );
    const scroller = h('div', { class: 'messages-scroll' }, empty, messages);
    const announcer = h('p', { class: 'sr-only', role: 'status', 'aria-live': 'polite' });
    const input = h('textarea', {
      id: 'composer-input',
      rows: '1',
      placeholder: 'Message the assistant',
      'aria-describedby': 'composer-hint',
      onkeydown: (event: KeyboardEvent) => {
        // Enter sends; Shift+Enter is a new line; Enter while composing (IME) is not ours.
        if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          form.requestSubmit();
        }
      },
      oninput: () => autosize(),
    });
    const files = h('input', {
      type: 'file',
      accept: 'image/*',
      multiple: true,
      class: 'sr-only',
      tabindex: '-1',
      'aria-hidden': 'true',
      onchange: () => void addFiles(),
    });
    const chips = h('div', { class: 'attachments' });
    // A voice note: recorded with MediaRecorder (only in a secure context, where the browser
    // offers the microphone at all) and sent at once as an audio attachment.
    let recorder: MediaRecorder | undefined;
    const canRecord =
      window.isSecureContext && typeof MediaRecorder !== 'undefined' && !!navigator.mediaDevices?.getUserMedia;
    const mic = h(
      'button',
      {
        type: 'button',
        class: 'icon mic',
        'aria-label': 'Record a voice note',
        title: 'Record a voice note',
        'aria-pressed': 'false',
        hidden: !canRecord,
        onclick: () => void toggleRecording(),
      },
      '🎤',
    );
    const sendButton = h('button', { type: 'submit', class: 'primary send' }, 'Send');
    const composerNote = h(
      'p',
      { class: 'composer-hint', id: 'composer-hint' },
      'Enter to send · Shift+Enter for a new line',
    );
    const form = h(
      'form',
      { class: 'composer', onsubmit: (event: Event) => (event.preventDefault(), void submit()) },
      chips,
      h(
        'div',
        { class: 'composer-row' },
        h('label', { class: 'sr-only', for: 'composer-input' }, 'Message'),
        h(
          'button',
          {
            type: 'button',
            class: 'icon attach',
            'aria-label': 'Attach images',
            title: 'Attach images',
            onclick: () => files.click(),
          },
          '+',
        ),
        input,
        mic,
        sendButton,
      ),
      files,
      composerNote,
    );
    const thread = h(
      'div',
      { class: 'thread' },
      h('header', { class: 'thread-head' }, toggle, h('div', { class: 'thread-title' }, title, hint), stop),
      scroller,
      announcer,
      form,
    );
    replace(root, h('section', { class: 'chat' }, sidebar, thread));

    // ── Conversations ────────────────────────────────────────────────────────────
    function pickInitial(): Conversation {
      const requested = params.get('session');
      if (requested) return conversationFor(requested);
      const saved = loadJson<Conversation | null>(CURRENT_KEY, null);
      if (saved && (saved.key || saved.threadId) && (saved.via === 'webchat' || saved.via === 'operator')) return saved;
      return { key: mainKey, via: 'webchat' };
    }

    function conversationFor(key: string): Conversation {
      return known[key] !== undefined
        ? { key, via: 'webchat', ...(known[key] ? { threadId: known[key] } : {}) }
        : { key, via: 'operator' };
    }

    function remember(): void {
      if (conversation.via === 'webchat' && conversation.key) {
        known[conversation.key] = conversation.threadId ?? '';
        saveJson(KNOWN_KEY, known);
      }
      saveJson(CURRENT_KEY, conversation);
    }

    function titleOf(key: string | undefined, row?: SessionRow): string {
      if (!key) return 'New chat';
      if (row?.label) return row.label;
      if (titles[key]) return titles[key];
      if (key === mainKey) return 'Main conversation';
      if (row?.displayName) return row.displayName;
      const thread = key.startsWith(`${mainKey}:topic:`) ? key.slice(mainKey.length + ':topic:'.length) : undefined;
      if (thread) return `Conversation ${thread.slice(0, 6)}`;
      return key
        .replace(/^agent:[^:]+:/, '')
        .split(':')
        .join(' · ');
    }

    function showConversation(): void {
      title.textContent = titleOf(conversation.key);
      hint.textContent =
        conversation.via === 'operator'
          ? 'WebChat did not start this session: your messages go into it as the operator.'
          : conversation.key
            ? ''
            : 'A new conversation of its own.';
      for (const button of list.querySelectorAll<HTMLElement>('[data-key]')) {
        if (button.dataset.key === (conversation.key ?? '')) button.setAttribute('aria-current', 'true');
        else button.removeAttribute('aria-current');
      }
    }

    function select(next: Conversation): void {
      conversation = next;
      claim.changed();
      remember();
      showConversation();
      setSidebar(false);
      void loadHistory();
    }

    function newChat(): void {
      select({ via: 'webchat', threadId: randomId(4) });
      void loadList();
      input.focus();
    }

    function setSidebar(open: boolean): void {
      root.classList.toggle('show-conversations', open);
      toggle.setAttribute('aria-expanded', String(open));
    }

    let listTimer: number | undefined;
    function refreshListSoon(): void {
      clearTimeout(listTimer);
      listTimer = window.setTimeout(() => void loadList(), 400);
    }

    async function loadList(): Promise<void> {
      try {
        const { sessions } = await gw.call<{ sessions: SessionRow[] }>('sessions.list', { limit: 50 });
        const previews = new Map<string, string>();
        if (sessions.length) {
          const result = await gw
            .call<{ previews: Array<{ key: string; items: Array<{ role: string; text: string }> }> }>(
              'sessions.preview',
              { keys: sessions.map((row) => row.key).slice(0, 64), limit: 1, maxChars: 90 },
            )
            .catch(() => ({ previews: [] }));
          for (const preview of result.previews) previews.set(preview.key, preview.items.at(-1)?.text ?? '');
        }
        const rows: Array<SessionRow | undefined> = sessions;
        if (!conversation.key) rows.unshift(undefined);
        replace(
          list,
          rows.map((row) =>
            h(
              'li',
              null,
              h(
                'button',
                {
                  type: 'button',
                  class: 'conv',
                  'data-key': row?.key ?? '',
                  onclick: () => (row ? select(conversationFor(row.key)) : undefined),
                },
                h(
                  'span',
                  { class: 'conv-title' },
                  titleOf(row?.key, row),
                  row?.hasActiveRun
                    ? h('span', { class: 'dot', title: 'Replying…', 'aria-label': '(replying)' })
                    : null,
                ),
                h('span', { class: 'conv-preview' }, row ? previews.get(row.key) || ' ' : 'Say something to start'),
                row ? h('span', { class: 'conv-time' }, formatAgo(row.updatedAt)) : null,
              ),
            ),
          ),
        );
        showConversation();
      } catch (error) {
        replace(
          list,
          h(
            'li',
            null,
            errorBox(error, () => void loadList()),
          ),
        );
      } finally {
        list.removeAttribute('aria-busy');
      }
    }

    // ── Messages ─────────────────────────────────────────────────────────────────
    function nearBottom(): boolean {
      return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 120;
    }

    function add(item: HTMLElement): HTMLElement {
      const follow = nearBottom();
      const typing = messages.querySelector('.typing');
      messages.insertBefore(item, typing);
      empty.hidden = true;
      if (follow) scroller.scrollTop = scroller.scrollHeight;
      return item;
    }

    function bubble(role: 'user' | 'assistant' | 'system', body: Node, ts?: number, extra?: Node | null): HTMLElement {
      const who = role === 'user' ? 'You' : role === 'assistant' ? 'Assistant' : 'Notice';
      return h(
        'li',
        { class: `msg ${role}` },
        h(
          'div',
          { class: 'meta' },
          h('span', { class: 'who' }, who),
          ts ? h('time', { datetime: new Date(ts).toISOString() }, formatTime(ts)) : null,
        ),
        h('div', { class: 'body' }, body),
        extra ?? null,
      );
    }

    function userBody(text: string, images: Array<{ src: string; name?: string; mimeType?: string }>): Node {
      const audio = images.filter((item) => item.mimeType?.startsWith('audio/'));
      const pictures = images.filter((item) => !item.mimeType?.startsWith('audio/'));
      return h(
        'div',
        null,
        text ? h('p', { class: 'plain' }, text) : null,
        pictures.length
          ? h(
              'div',
              { class: 'thumbs' },
              pictures.map((image) => h('img', { src: image.src, alt: image.name ?? 'attached image' })),
            )
          : null,
        ...audio.map((item) => h('audio', { controls: true, src: item.src, 'aria-label': 'Voice note' })),
      );
    }

    /**
     * Files in a message: a local file (the state dir's media folder) is loaded through a link
     * the gateway signs (webchat.media) and shown as an image, an audio player or a document
     * link; an http(s) URL stays a link.
     */
    function mediaList(refs: readonly string[]): Node | null {
      if (!refs.length) return null;
      return h(
        'ul',
        { class: 'media' },
        refs.map((ref) => {
          const item = h('li', null);
          if (/^https?:/i.test(ref)) {
            item.append(h('a', { href: ref, target: '_blank', rel: 'noopener noreferrer' }, ref));
            return item;
          }
          const name = ref.split('/').pop() ?? ref;
          item.append(name);
          void gw
            .call<{ url: string; kind: string; name: string }>('webchat.media', { path: ref.replace(/^file:\/\//, '') })
            .then((file) => {
              const link = h(
                'a',
                { href: file.url, target: '_blank', rel: 'noopener', download: file.name },
                file.name,
              );
              replace(
                item,
                file.kind === 'image'
                  ? h('img', { class: 'media-image', src: file.url, alt: file.name })
                  : file.kind === 'audio'
                    ? h('audio', { controls: true, preload: 'metadata', src: file.url, 'aria-label': file.name })
                    : file.kind === 'video'
                      ? h('video', { controls: true, preload: 'metadata', src: file.url })
                      : h('span', { class: 'media-doc' }, '📄 ', link),
              );
            })
            .catch((error: unknown) =>
              replace(item, h('span', { class: 'error-text' }, `${name}: ${errorMessage(error)}`)),
            );
          return item;
        }),
      );
    }

    /** `[[media:…]]` in a reply and `MEDIA:` lines of a tool result name files to show. */
    function splitMedia(text: string): { text: string; media: string[] } {
      const media: string[] = [];
      const rest = text
        .replace(/\[\[\s*media\s*:\s*([^\]\s][^\]]*?)\s*\]\]/gi, (_match, ref: string) => (media.push(ref.trim()), ''))
        .replace(/^MEDIA:(\S.*)$/gm, (_match, ref: string) => (media.push(ref.trim()), ''));
      return { text: rest.trim(), media };
    }

    function note(text: string, tone: 'info' | 'error' = 'info'): void {
      add(bubble('system', h('p', { class: tone === 'error' ? 'error-text' : '' }, text)));
    }

    function renderHistory(history: HistoryMessage[], active: boolean): void {
      const results = new Map<string, HistoryMessage>();
      for (const message of history)
        if (message.role === 'toolResult' && message.toolCallId) results.set(message.toolCallId, message);
      const lastAssistant = history.findLast((message) => message.role === 'assistant');
      for (const message of history) {
        if (message.role === 'user') {
          const parts = typeof message.content === 'string' ? [] : message.content;
          const images = parts
            .filter((part) => part.type === 'image' && part.data)
            .map((part) => ({ src: `data:${part.mimeType};base64,${part.data}`, mimeType: part.mimeType }));
          add(bubble('user', userBody(textOf(message.content), images), message.timestamp));
        } else if (message.role === 'assistant') {
          const { text, media } = splitMedia(textOf(message.content));
          if (text.trim() || media.length)
            add(bubble('assistant', renderMarkdown(text), message.timestamp, mediaList(media)));
          const calls =
            typeof message.content === 'string' ? [] : message.content.filter((part) => part.type === 'toolCall');
          for (const call of calls) {
            const result = call.id ? results.get(call.id) : undefined;
            // A call of the run still going may have its result yet to come (as an agent event).
            const running = !result && active && message === lastAssistant;
            const card = toolCard({
              id: call.id ?? '',
              name: call.name ?? 'tool',
              args: call.arguments,
              status: result ? (result.isError ? 'error' : 'ok') : running ? 'running' : 'unknown',
              ...(result ? { result: textOf(result.content) } : {}),
            });
            if (call.id) toolCards.set(call.id, card);
            add(card.item);
            const made = result && !result.isError ? splitMedia(textOf(result.content)).media : [];
            if (made.length) add(bubble('assistant', h('span', null), result?.timestamp, mediaList(made)));
          }
          if (message.errorMessage) note(message.errorMessage, 'error');
        }
      }
    }

    async function loadHistory(): Promise<void> {
      const key = conversation.key;
      messages.replaceChildren();
      pending.clear();
      streaming.clear();
      finished.clear();
      toolCards.clear();
      sealed.clear();
      approvalItems.clear();
      held = [];
      activeOnOpen = false;
      empty.hidden = !!key;
      updateBusy();
      if (!key) return showApprovals();
      messages.setAttribute('aria-busy', 'true');
      const loading = add(h('li', { class: 'history-loading' }, loadingBox('Loading the conversation…')));
      try {
        const history = await gw.call<{ messages: HistoryMessage[]; hasActiveRun?: boolean }>('chat.history', {
          sessionKey: key,
          limit: 200,
        });
        if (conversation.key !== key) return;
        loading.remove();
        activeOnOpen = history.hasActiveRun === true;
        renderHistory(history.messages, activeOnOpen);
        scroller.scrollTop = scroller.scrollHeight;
      } catch (error) {
        if (conversation.key !== key) return;
        replace(
          loading,
          errorBox(error, () => void loadHistory()),
        );
      } finally {
        if (conversation.key === key) {
          messages.removeAttribute('aria-busy');
          empty.hidden = messages.querySelector('.msg') !== null || messages.querySelector('.notice') !== null;
          showApprovals();
          updateBusy();
        }
      }
    }

    // ── Streaming ────────────────────────────────────────────────────────────────
    function updateBusy(): void {
      const busy = pending.size > 0 || streaming.size > 0 || activeOnOpen;
      stop.hidden = !busy;
      const waiting = busy && streaming.size === 0;
      const typing = messages.querySelector('.typing');
      if (waiting && !typing) {
        messages.append(
          h(
            'li',
            { class: 'msg assistant typing', 'aria-label': 'The assistant is working' },
            h('span', { class: 'dots', 'aria-hidden': 'true' }, h('i'), h('i'), h('i')),
          ),
        );
        empty.hidden = true;
        if (nearBottom()) scroller.scrollTop = scroller.scrollHeight;
      } else if (!waiting) typing?.remove();
    }

    function streamFor(runId: string) {
      let entry = streaming.get(runId);
      if (!entry) {
        const body = h('div', { class: 'markdown' });
        const item = add(bubble('assistant', body, Date.now()));
        item.setAttribute('aria-busy', 'true');
        entry = { item, body, text: '' };
        streaming.set(runId, entry);
        announcer.textContent = 'The assistant is replying…';
      }
      return entry;
    }

    function setText(entry: { body: HTMLElement; text: string }, text: string): void {
      if (text === entry.text) return;
      const follow = nearBottom();
      entry.text = text;
      replace(entry.body, renderMarkdown(text));
      if (follow) scroller.scrollTop = scroller.scrollHeight;
    }

    function onChat(event: ChatEvent): void {
      keep({ chat: event });
      if (event.sessionKey !== conversation.key) {
        if (event.state !== 'delta') refreshListSoon();
        return;
      }
      apply(event);
    }

    function onAgent(event: ToolEvent): void {
      if (event.stream === 'assistant' && event.data.failover && event.sessionKey === conversation.key) {
        const { from, to, cause } = event.data.failover;
        const notice = `Model ${from} failed (${cause}), trying ${to}.`;
        add(h('li', { class: 'msg model-notice', role: 'status' }, h('p', { class: 'muted' }, notice)));
        announcer.textContent = notice;
        return;
      }
      if (event.stream !== 'tool') return;
      keep({ tool: event });
      if (event.sessionKey === conversation.key) applyTool(event);
    }

    function keep(entry: { chat: ChatEvent } | { tool: ToolEvent }): void {
      recent.push(entry);
      if (recent.length > 200) recent.shift();
    }

    function applyTool(event: ToolEvent): void {
      const { runId, data } = event;
      if (finished.has(runId) || !data.toolCallId) return;
      if (data.phase === 'start' && !toolCards.has(data.toolCallId)) {
        // The text so far stays where it is; what the model writes after the call goes below the card.
        const entry = streaming.get(runId);
        if (entry) {
          entry.item.removeAttribute('aria-busy');
          streaming.delete(runId);
          sealed.set(runId, entry);
        }
        pending.add(runId);
        const card = toolCard({ id: data.toolCallId, name: data.name ?? 'tool', args: data.args, status: 'running' });
        toolCards.set(data.toolCallId, card);
        add(card.item);
        announcer.textContent = `Running ${data.name ?? 'a tool'}…`;
        updateBusy();
      } else if (data.phase === 'result') {
        let card = toolCards.get(data.toolCallId);
        if (!card) {
          card = toolCard({ id: data.toolCallId, name: data.name ?? 'tool', status: 'running' });
          toolCards.set(data.toolCallId, card);
          add(card.item);
        }
        card.update({
          status: data.isError ? 'error' : 'ok',
          result: data.result ?? '',
          ...(data.durationMs !== undefined ? { durationMs: data.durationMs } : {}),
        });
      }
    }

    /** This conversation's approval requests, in the thread; an answered one leaves its outcome. */
    function showApprovals(resolved?: ApprovalOutcome): void {
      const mine = app.approvals.list().filter(owns);
      for (const request of mine) {
        if (approvalItems.has(request.id)) continue;
        const item = add(h('li', { class: 'msg approval-inline' }, app.approvals.card(request)));
        approvalItems.set(request.id, { item, command: request.request.command });
        announcer.textContent = 'The assistant asks to run a command.';
      }
      for (const [id, shown] of approvalItems) {
        if (mine.some((request) => request.id === id)) continue;
        approvalItems.delete(id);
        if (resolved?.id === id)
          replace(
            shown.item,
            h('p', { class: 'approval-outcome' }, `${outcomeText(resolved)}: `, h('code', null, shown.command)),
          );
        else shown.item.remove();
      }
    }

    function owns(request: { request: { sessionKey?: string } }): boolean {
      return !!conversation.key && request.request.sessionKey === conversation.key;
    }

    function apply(event: ChatEvent): void {
      if (finished.has(event.runId)) return;
      const text = textOf(event.message?.content);
      if (event.state === 'delta') {
        pending.delete(event.runId);
        setText(streamFor(event.runId), text);
        updateBusy();
        return;
      }
      const before = sealed.get(event.runId);
      const entry =
        streaming.get(event.runId) ??
        (before && event.state !== 'final' && before.text === text ? before : undefined) ??
        (text.trim() || event.state !== 'final' ? streamFor(event.runId) : undefined);
      sealed.delete(event.runId);
      if (entry) {
        setText(entry, text);
        entry.item.removeAttribute('aria-busy');
        if (event.state === 'aborted') entry.item.append(h('p', { class: 'stopped' }, 'Stopped'));
        if (event.state === 'error')
          entry.item.append(h('p', { class: 'error-text' }, event.errorMessage || 'The reply failed.'));
        if (!entry.text.trim() && event.state === 'aborted')
          entry.body.replaceChildren(h('p', { class: 'muted' }, '(no reply)'));
      }
      finished.add(event.runId);
      streaming.delete(event.runId);
      pending.delete(event.runId);
      activeOnOpen = false;
      announcer.textContent =
        event.state === 'final'
          ? 'Reply finished.'
          : event.state === 'aborted'
            ? 'Reply stopped.'
            : 'The reply failed.';
      releaseHeld(text);
      void forgetEndedRuns();
      updateBusy();
      refreshListSoon();
    }

    /** Runs merged into another (queue "collect") never get events of their own: ask. */
    async function forgetEndedRuns(): Promise<void> {
      for (const runId of [...pending]) {
        const result = await gw
          .call<{ status: string }>('agent.wait', { runId, timeoutMs: 0 })
          .catch(() => ({ status: 'unknown' }));
        if (result.status !== 'timeout') pending.delete(runId);
      }
      updateBusy();
    }

    function onDelivered(message: WebchatMessage): void {
      if (message.to !== clientId) return;
      const ours = conversation.via === 'webchat' && (message.threadId ?? undefined) === conversation.threadId;
      if (!ours) {
        app.toast('A new WebChat message arrived in another conversation.');
        refreshListSoon();
        return;
      }
      if (pending.size || streaming.size) held.push(message);
      else showDelivered(message);
    }

    function showDelivered(message: WebchatMessage): void {
      add(
        bubble('assistant', renderMarkdown(message.text), message.ts, mediaList(message.media.map((item) => item.url))),
      );
    }

    /** The streamed reply already showed what the channel delivered for it; show the rest. */
    function releaseHeld(finalText: string): void {
      const rest = held.filter((message) => !message.text.trim() || !finalText.includes(message.text.trim()));
      held = [];
      for (const message of rest) if (message.text.trim() || message.media.length) showDelivered(message);
    }

    // ── Sending ──────────────────────────────────────────────────────────────────
    async function submit(voice?: Attachment): Promise<void> {
      const text = voice ? '' : input.value.trim();
      const images = voice ? [voice] : attachments;
      if (!text && !images.length) return;
      if (gw.state.phase !== 'open') {
        app.toast('Not connected: the message was not sent.', 'error');
        return;
      }
      if (!voice) {
        input.value = '';
        attachments = [];
        renderChips();
      }
      autosize();
      const sent = add(
        bubble(
          'user',
          userBody(
            text,
            images.map((image) => ({ src: image.dataUrl, name: image.fileName, mimeType: image.mimeType })),
          ),
          Date.now(),
        ),
      );
      const wire = images.map((image) => ({
        type: image.mimeType.startsWith('audio/') ? 'audio' : 'image',
        mimeType: image.mimeType,
        fileName: image.fileName,
        content: image.dataUrl,
      }));
      try {
        if (conversation.via === 'webchat') {
          const outcome = await gw.act<Outcome>('webchat.send', {
            text,
            clientId,
            ...(conversation.threadId ? { threadId: conversation.threadId } : {}),
            ...(wire.length ? { attachments: wire } : {}),
          });
          accepted(outcome, text);
        } else {
          const result = await gw.act<{ runId: string; status: string }>('chat.send', {
            sessionKey: conversation.key,
            message: text,
            ...(wire.length ? { attachments: wire } : {}),
          });
          if (!finished.has(result.runId)) pending.add(result.runId);
          updateBusy();
        }
      } catch (error) {
        sent.classList.add('failed');
        sent.append(h('p', { class: 'error-text' }, `Not sent: ${errorMessage(error)}`));
        if (!input.value && !voice) input.value = text;
        autosize();
      }
    }

    function accepted(outcome: Outcome, text: string): void {
      if (outcome.status === 'dispatched') {
        if (conversation.key !== outcome.sessionKey) {
          if (!conversation.key && text) {
            titles[outcome.sessionKey] = text.split('\n')[0]!.slice(0, 60);
            saveJson(TITLES_KEY, titles);
          }
          conversation = { ...conversation, key: outcome.sessionKey };
          remember();
          showConversation();
          claim.changed();
          // What the run did before we knew its session was not ours then: show it now.
          for (const entry of recent) {
            if ('chat' in entry && entry.chat.sessionKey === outcome.sessionKey) apply(entry.chat);
            if ('tool' in entry && entry.tool.sessionKey === outcome.sessionKey) applyTool(entry.tool);
          }
        }
        if (!finished.has(outcome.runId)) pending.add(outcome.runId);
        updateBusy();
        refreshListSoon();
      } else if (outcome.status === 'pairing') {
        // A new code was just delivered as a message; repeat it only when it was not.
        if (!outcome.created)
          note(
            `This browser is waiting for approval. Pairing code: ${outcome.code} (on the gateway: claw pairing approve webchat ${outcome.code}).`,
          );
      } else if (outcome.status === 'blocked' || outcome.status === 'history') {
        note(`Not answered: ${outcome.reason}`, 'error');
      }
    }

    async function abort(): Promise<void> {
      if (!conversation.key) return;
      stop.disabled = true;
      try {
        await gw.call('chat.abort', { sessionKey: conversation.key });
        // Streaming runs end with an "aborted" event; queued ones just disappear.
        pending.clear();
        activeOnOpen = false;
        updateBusy();
      } catch (error) {
        app.toast(`Could not stop: ${errorMessage(error)}`, 'error');
      } finally {
        stop.disabled = false;
      }
    }

    // ── Composer ─────────────────────────────────────────────────────────────────
    function autosize(): void {
      input.style.height = 'auto';
      input.style.height = `${Math.min(input.scrollHeight, 240)}px`;
    }

    async function addFiles(): Promise<void> {
      for (const file of Array.from(files.files ?? [])) {
        if (!file.type.startsWith('image/')) app.toast(`${file.name} is not an image.`, 'error');
        else if (file.size > MAX_ATTACHMENT_BYTES) app.toast(`${file.name} is larger than 5 MB.`, 'error');
        else attachments.push({ mimeType: file.type, fileName: file.name, dataUrl: await readAsDataUrl(file) });
      }
      files.value = '';
      renderChips();
      input.focus();
    }

    async function toggleRecording(): Promise<void> {
      if (recorder) return recorder.stop();
      let stream: MediaStream;
      try {
        stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      } catch (error) {
        app.toast(`The microphone is not available: ${errorMessage(error)}`, 'error');
        return;
      }
      const chunks: Blob[] = [];
      const active = new MediaRecorder(stream);
      recorder = active;
      active.ondataavailable = (event) => event.data.size && chunks.push(event.data);
      active.onstop = () => {
        recorder = undefined;
        for (const track of stream.getTracks()) track.stop();
        mic.setAttribute('aria-pressed', 'false');
        mic.setAttribute('aria-label', 'Record a voice note');
        mic.classList.remove('recording');
        const type = (active.mimeType || 'audio/webm').split(';')[0]!;
        const blob = new Blob(chunks, { type });
        if (!blob.size) return app.toast('Nothing was recorded.', 'error');
        if (blob.size > MAX_VOICE_BYTES) return app.toast('The voice note is longer than the gateway takes.', 'error');
        void readAsDataUrl(new File([blob], 'voice-note.webm', { type })).then((dataUrl) =>
          submit({ mimeType: type, fileName: `voice-note.${type.split('/')[1] ?? 'webm'}`, dataUrl }),
        );
      };
      active.start();
      mic.setAttribute('aria-pressed', 'true');
      mic.setAttribute('aria-label', 'Stop recording and send');
      mic.classList.add('recording');
    }

    function renderChips(): void {
      replace(
        chips,
        attachments.map((attachment, index) =>
          h(
            'span',
            { class: 'chip' },
            h('img', { src: attachment.dataUrl, alt: '' }),
            attachment.fileName,
            h(
              'button',
              {
                type: 'button',
                class: 'icon',
                'aria-label': `Remove ${attachment.fileName}`,
                onclick: () => (attachments.splice(index, 1), renderChips()),
              },
              '×',
            ),
          ),
        ),
      );
    }

    function setConnected(open: boolean): void {
      input.disabled = !open;
      sendButton.disabled = !open;
      input.placeholder = open ? 'Message the assistant' : 'Not connected — waiting for the gateway…';
    }

    // ── Wiring ───────────────────────────────────────────────────────────────────
    const claim = app.approvals.claim(owns);
    const cleanups = [
      gw.on<ChatEvent>('chat', onChat),
      gw.on<ToolEvent>('agent', onAgent),
      app.approvals.watch(showApprovals),
      () => claim.release(),
      gw.on<WebchatMessage>('webchat.message', onDelivered),
      gw.watch((state) => setConnected(state.phase === 'open')),
      onReconnect(app, () => {
        void loadList();
        void loadHistory();
      }),
      every(30_000, () => void loadList()),
    ];
    remember();
    showConversation();
    void loadList();
    void loadHistory();
    input.focus();
    return () => {
      clearTimeout(listTimer);
      for (const cleanup of cleanups) cleanup();
    };
  },
};

function readAsDataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}
