/**
 * Text-to-speech: the speech providers as `tts:<id>` services, the `tts` service (the engine),
 * and replies spoken through the outbound path's message_sending hook — the turn loop is not
 * touched. A run's final reply is known by its agent_end; the hook speaks it when the mode
 * asks (always; inbound after a voice note; tagged when it carries a directive), strips the
 * directives from what the user reads, and adds the voice note. A failure leaves the text
 * reply as it was, with a warning.
 */
import { join } from 'node:path';
import { definePlugin, errorResult, textResult, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import { registerSpeechProvider, TTS_SERVICE } from '../../sdk/tts.js';
import { parseDirectives, speakable } from './directives.js';
import { TtsEngine, type Speech } from './engine.js';
import { registerTtsMethods } from './methods.js';
import { Prefs } from './prefs.js';
import { elevenlabsProvider, localCliProvider, openaiProvider } from './providers.js';
import {
  AUTO_MAX_CHARS,
  AUTO_MODES,
  checkSettings,
  resolveSettings,
  type AutoMode,
  type TtsSettings,
  type Where,
} from './settings.js';

/** Replies shorter than this stay text (OpenClaw's rule). */
const MIN_SPOKEN = 10;
const RUN_MEMORY_MS = 10 * 60_000;

function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.set(key, value);
  setTimeout(() => map.get(key) === value && map.delete(key), RUN_MEMORY_MS).unref();
}

export default definePlugin({
  id: 'tts',
  register(api: PluginApi) {
    const { kernel } = api;
    const schema = api.kernel.plugins().find((record) => record.id === api.id)?.manifest?.configSections?.tts as
      JsonSchema | undefined;
    for (const warning of checkSettings(kernel, schema)) api.logger.warn(`tts: ${warning}`);
    /** Settings per channel and account, worked out again when the config changes (hot reload). */
    let cache: { config: unknown; byWhere: Map<string, TtsSettings> } = { config: undefined, byWhere: new Map() };
    const settings = (where: Where = {}): TtsSettings => {
      if (cache.config !== kernel.config()) cache = { config: kernel.config(), byWhere: new Map() };
      const key = `${where.channel ?? ''}\u0000${where.accountId ?? ''}`;
      let found = cache.byWhere.get(key);
      if (!found) cache.byWhere.set(key, (found = resolveSettings(kernel, where)));
      return found;
    };
    const prefsPath =
      kernel.env.OPENCLAW_TTS_PREFS || settings().prefsPath || join(kernel.paths.stateDir, 'settings', 'tts.json');
    const engine = new TtsEngine(
      kernel,
      api.logger,
      settings,
      new Prefs(prefsPath),
      join(kernel.paths.stateDir, 'media', 'tts'),
    );

    registerSpeechProvider(api, openaiProvider(kernel));
    registerSpeechProvider(api, elevenlabsProvider(kernel));
    registerSpeechProvider(api, localCliProvider(kernel, join(kernel.paths.stateDir, 'tmp', 'tts')));
    api.registerService({ id: TTS_SERVICE, api: engine });

    /** Sessions whose last message was a voice note. */
    const inboundVoice = new Map<string, boolean>();
    /** Runs whose turn ended: their next send is the final reply. */
    const finals = new Set<string>();
    /** Speech made for a run (the tts tool) or a session (/tts audio), attached to its next reply. */
    const pending = new Map<string, Speech>();
    /** Voice files on their way out, removed once sent. */
    const outgoing = new Map<string, string>();

    api.on('message_received', (event, ctx) => {
      if (!ctx.sessionKey) return;
      const attachments = (event.metadata?.attachments ?? []) as Array<{ mimeType?: string }>;
      inboundVoice.delete(ctx.sessionKey); // newest last: the map stays small (one per session)
      inboundVoice.set(
        ctx.sessionKey,
        attachments.some((item) => /^audio\//i.test(item.mimeType ?? '')),
      );
    });

    api.on('agent_end', (_event, ctx) => {
      if (ctx.runId) {
        finals.add(ctx.runId);
        setTimeout(() => finals.delete(ctx.runId!), RUN_MEMORY_MS).unref();
      }
    });

    api.on(
      'message_sending',
      async (event, ctx) => {
        const channel = event.channel ?? ctx.channel;
        const accountId = typeof event.metadata?.accountId === 'string' ? event.metadata.accountId : undefined;
        const where: Where = { ...(channel ? { channel } : {}), ...(accountId ? { accountId } : {}) };
        const current = settings(where);
        const directives = current.directives ? parseDirectives(event.content) : undefined;
        const visible = directives ? directives.visible : event.content;
        const plain = visible !== event.content ? { content: visible } : undefined;
        const runId = ctx.runId;
        const prepared = (runId && pending.get(runId)) || (ctx.sessionKey && pending.get(`session:${ctx.sessionKey}`));
        const final = runId !== undefined && finals.has(runId) && !event.content.startsWith('Reasoning:\n');
        if (!prepared && !final) return plain;
        if (!engine.speaks(channel)) {
          if (prepared) api.logger.warn(`tts: ${channel ?? 'this surface'} cannot take audio; the reply goes as text`);
          return plain;
        }
        const { auto } = engine.mode(ctx.sessionKey, where);
        const wanted =
          auto === 'always' ||
          (auto === 'inbound' && ctx.sessionKey !== undefined && inboundVoice.get(ctx.sessionKey) === true) ||
          (auto === 'tagged' && directives?.tagged === true);
        if (!prepared && (!wanted || (event.metadata?.media as unknown[] | undefined)?.length)) return plain;
        try {
          let speech = prepared || undefined;
          if (speech) {
            pending.delete(runId && pending.get(runId) === speech ? runId : `session:${ctx.sessionKey}`);
          } else {
            const text = speakable(directives?.speech ?? visible).slice(0, AUTO_MAX_CHARS);
            if (text.length < MIN_SPOKEN && !directives?.speech) return plain;
            if (directives?.unknown.length)
              api.logger.warn(`tts: unknown directive keys ignored: ${directives.unknown.join(' ')}`);
            const { provider, ...overrides } = directives?.overrides ?? {};
            speech = await engine.synthesize(text, {
              voiceNote: engine.voiceNote(channel),
              where,
              ...(provider && current.allowProvider ? { provider: String(provider) } : {}),
              overrides,
              ...(ctx.signal ? { signal: ctx.signal } : {}),
            });
          }
          const file = await engine.render(speech, channel, ctx.signal);
          if (runId) remember(outgoing, runId, file.path);
          return { content: visible, media: [{ url: file.path, mimeType: file.mimeType, voice: file.voice }] };
        } catch (error) {
          api.logger.warn(`tts: no voice reply, the text goes alone: ${(error as Error).message}`);
          return plain;
        }
      },
      // A local voice may take a while; the text waits for it (OpenClaw's final mode).
      { timeoutMs: 150_000 },
    );

    api.on('message_sent', (event, ctx) => {
      const path = ctx.runId ? outgoing.get(ctx.runId) : undefined;
      if (!path) return;
      outgoing.delete(ctx.runId!);
      engine.remove(path);
      if (event.success) finals.delete(ctx.runId!);
    });

    api.registerCommand({
      name: 'tts',
      description:
        'Spoken replies for this chat: /tts on | off | always | inbound | tagged | default | status | audio <text>',
      acceptsArgs: true,
      async handler({ args, sessionKey, channel }) {
        const [word = 'status', ...rest] = args.trim().split(/\s+/).filter(Boolean);
        let choice = word.toLowerCase();
        if (choice === 'chat') choice = (rest[0] ?? '').toLowerCase();
        if (choice === 'status') {
          const where = channel ? { channel } : {};
          const { auto, from } = engine.mode(sessionKey, where);
          const order = await engine.order(undefined, where).catch((error: Error) => error);
          const providers = order instanceof Error ? `no provider (${order.message})` : `provider ${order.join(' → ')}`;
          const last = engine.last
            ? ` · last: ${engine.last.ok ? 'ok' : `failed (${engine.last.error})`} ${engine.last.attempts.join(', ')}`
            : '';
          return { text: `🔊 TTS ${auto} (${from === 'session' ? 'this chat' : from}) · ${providers}${last}` };
        }
        if (choice === 'audio') {
          const text = args.trim().replace(/^audio\s*/i, '');
          if (!text) return { text: '⚠️ /tts audio needs the text to speak.' };
          if (!sessionKey) return { text: '/tts audio works inside a chat.' };
          if (text.length > settings().maxTextLength)
            return { text: `⚠️ The text is longer than tts.maxTextLength (${settings().maxTextLength}).` };
          try {
            const speech = await engine.synthesize(text, {
              voiceNote: engine.voiceNote(channel),
              ...(channel ? { where: { channel } } : {}),
            });
            remember(pending, `session:${sessionKey}`, speech);
            return { text: '🔊' };
          } catch (error) {
            return { text: `⚠️ TTS failed: ${(error as Error).message}` };
          }
        }
        if (!sessionKey) return { text: '/tts works inside a chat.' };
        const wanted: Record<string, AutoMode | 'default'> = { on: 'always', off: 'off', default: 'default' };
        for (const mode of AUTO_MODES) wanted[mode] = mode;
        const mode = wanted[choice];
        if (!mode)
          return { text: `⚠️ /tts takes on, off, always, inbound, tagged, default, status or audio, not "${word}".` };
        await engine.prefs.update((data) => {
          data.sessions ??= {};
          if (mode === 'default') delete data.sessions[sessionKey];
          else data.sessions[sessionKey] = { auto: mode };
        });
        const now = engine.mode(sessionKey, channel ? { channel } : {});
        return {
          text:
            mode === 'default'
              ? `🔊 TTS for this chat follows the default again (${now.auto}).`
              : `🔊 TTS for this chat: ${mode}.`,
        };
      },
    });

    api.registerTool({
      name: 'tts',
      label: 'Text to speech',
      description:
        'Speak text aloud: the audio goes with your reply (a voice note on Telegram and WhatsApp). Use only when the user asks for audio.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        required: ['text'],
        properties: {
          text: { type: 'string', minLength: 1, description: 'What to say' },
          channel: { type: 'string', description: 'The channel the audio is for (decides voice note or audio file)' },
          timeoutMs: { type: 'integer', minimum: 1, description: 'Provider request timeout, milliseconds' },
        },
      },
      async execute(params: { text: string; channel?: string; timeoutMs?: number }, ctx) {
        if (params.text.length > settings().maxTextLength)
          return errorResult(`text is longer than tts.maxTextLength (${settings().maxTextLength} characters)`);
        if (!ctx.runId) return errorResult('the tts tool speaks into a reply; it needs an agent run');
        try {
          const speech = await engine.synthesize(params.text, {
            voiceNote: engine.voiceNote(params.channel),
            ...(params.timeoutMs ? { timeoutMs: params.timeoutMs } : {}),
            ...(ctx.signal ? { signal: ctx.signal } : {}),
          });
          remember(pending, ctx.runId, speech);
          return textResult(`Audio ready (${speech.provider}); it is sent with your reply.`, {
            provider: speech.provider,
            bytes: speech.audio.length,
          });
        } catch (error) {
          return errorResult(`text-to-speech failed: ${(error as Error).message}`);
        }
      },
    });

    registerTtsMethods(api, engine);
  },
});
