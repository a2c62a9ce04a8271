/**
 * OpenClaw's tts.* gateway methods: status, enable/disable (the host's auto preference),
 * providers, setProvider, personas (none: personas are not implemented) and convert (one
 * piece of text to an audio file under the state dir's media folder).
 */
import { ErrorCodes, ProtocolError, type PluginApi } from '../../sdk/index.js';
import type { TtsEngine } from './engine.js';
import { providerId } from './settings.js';

const invalid = (message: string) => new ProtocolError(ErrorCodes.INVALID_REQUEST, message);

export function registerTtsMethods(api: PluginApi, engine: TtsEngine): void {
  const status = async () => {
    const { auto } = engine.mode();
    const order = await engine.order().catch(() => [] as string[]);
    return {
      enabled: auto !== 'off',
      auto,
      provider: order[0] ?? null,
      persona: null,
      personas: [],
      fallbackProvider: order[1] ?? null,
      fallbackProviders: order.slice(1),
      prefsPath: engine.prefs.path,
      providerStates: await engine.states(),
      ...(engine.last ? { lastAttempt: engine.last } : {}),
    };
  };
  api.registerGatewayMethod('tts.status', {
    scope: 'operator.read',
    description: 'Text-to-speech state: auto mode, provider and fallbacks, provider readiness, the last attempt.',
    handler: status,
  });
  for (const [name, auto] of [
    ['tts.enable', 'always'],
    ['tts.disable', 'off'],
  ] as const)
    api.registerGatewayMethod(name, {
      scope: 'operator.write',
      sideEffect: 'optional',
      description: `Set this host's auto-TTS preference to ${auto}.`,
      handler: async () => {
        await engine.prefs.update((data) => void (data.auto = auto));
        return { enabled: auto !== 'off', auto };
      },
    });
  api.registerGatewayMethod('tts.providers', {
    scope: 'operator.read',
    description: 'Speech providers, whether each is configured and ready, and the active one.',
    handler: async () => ({
      providers: (await engine.states()).map((state) => ({ id: state.provider, name: state.provider, ...state })),
      active: (await engine.order().catch(() => [] as string[]))[0] ?? null,
    }),
  });
  api.registerGatewayMethod('tts.setProvider', {
    params: { type: 'object', required: ['provider'] },
    scope: 'operator.write',
    sideEffect: 'optional',
    description: "Set this host's preferred speech provider.",
    handler: async (params: { provider?: unknown }) => {
      if (typeof params.provider !== 'string' || !params.provider.trim())
        throw invalid('tts.setProvider requires provider (a non-empty string)');
      const id = providerId(params.provider);
      if (!engine.providerIds().includes(id))
        throw invalid(`provider "${params.provider}" is not installed (installed: ${engine.providerIds().join(', ')})`);
      await engine.prefs.update((data) => void (data.provider = id));
      return { provider: id };
    },
  });
  api.registerGatewayMethod('tts.personas', {
    scope: 'operator.read',
    description: 'Text-to-speech personas: none (claw does not implement personas).',
    handler: () => ({ active: null, personas: [] }),
  });
  api.registerGatewayMethod('tts.convert', {
    params: { type: 'object', required: ['text'] },
    scope: 'operator.write',
    sideEffect: 'optional',
    description: 'Speak text into an audio file: {audioPath, provider, outputFormat, voiceCompatible, latencyMs}.',
    handler: async (params: { text?: unknown; channel?: unknown; provider?: unknown; timeoutMs?: unknown }) => {
      if (typeof params.text !== 'string' || !params.text.trim())
        throw invalid('tts.convert requires text (a non-empty string)');
      const max = engine.settings().maxTextLength;
      if (params.text.length > max) throw invalid(`text is longer than tts.maxTextLength (${max} characters)`);
      const channel = typeof params.channel === 'string' ? params.channel : undefined;
      const started = performance.now();
      try {
        const speech = await engine.synthesize(params.text, {
          voiceNote: engine.voiceNote(channel),
          ...(typeof params.provider === 'string' ? { provider: params.provider } : {}),
          ...(typeof params.timeoutMs === 'number' && params.timeoutMs > 0 ? { timeoutMs: params.timeoutMs } : {}),
        });
        const file = await engine.render(speech, channel);
        return {
          audioPath: file.path,
          provider: speech.provider,
          outputFormat: file.voice ? 'opus' : 'mp3',
          voiceCompatible: file.voice,
          latencyMs: Math.round(performance.now() - started),
        };
      } catch (error) {
        throw new ProtocolError(ErrorCodes.UNAVAILABLE, `text-to-speech failed: ${(error as Error).message}`);
      }
    },
  });
}
