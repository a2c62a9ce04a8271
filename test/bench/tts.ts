/**
 * tts: what speaking a reply adds to it. A turn with the zero-latency model delivered to a
 * voice-note channel (an in-process stand-in named "telegram"), dispatch → the channel handed
 * the reply: TTS off, then auto "always" with the local CLI voice (espeak-ng) and with an
 * OpenAI-compatible fake on 127.0.0.1 answering pre-made MP3 at once — both converted to
 * Ogg/Opus by ffmpeg. p50 of each and the difference to off.
 */
import { definePlugin, type OutboundMessage } from '../../sdk/index.js';
import { agentStackDirs, bundledPluginDir, createTestKernel, scriptedModel } from '../../sdk/testing.js';
import { useService } from '../../sdk/services.js';
import { FakeSpeechServer, spokenMp3 } from '../fakes/speech-server.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;
const REPLY = 'The weather today is mild with a light breeze from the west.';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

async function turns(tts: Record<string, unknown>, count: number): Promise<number[]> {
  let handed: (message: OutboundMessage) => void = () => undefined;
  const channel = definePlugin({
    id: 'bench-voice-channel',
    register(api) {
      api.registerChannel({
        id: 'telegram',
        label: 'Telegram (bench)',
        textLimit: 4096,
        captionLimit: 1024,
        async start() {},
        async send(message: OutboundMessage) {
          handed(message);
          return { messageId: '1' };
        },
        status: () => [{ accountId: 'default', connected: true }],
      });
    },
  });
  const kernel = await createTestKernel({
    plugins: [...agentStackDirs(), bundledPluginDir('tts'), scriptedModel(() => REPLY), channel],
    config: { agents: { defaults: { model: 'scripted/echo' } }, tts },
  });
  await kernel.start();
  try {
    const agent = await useService<{ dispatch(input: unknown): Promise<unknown> }>(kernel, 'agent');
    const times: number[] = [];
    for (let i = 0; i <= count; i++) {
      const started = performance.now();
      const done = new Promise<OutboundMessage>((resolve) => (handed = resolve));
      await agent!.dispatch({
        message: `turn ${i}`,
        channel: 'telegram',
        sessionKey: `agent:main:telegram:direct:${i % 5}`,
        deliver: { channel: 'telegram', to: String(i % 5) },
      });
      const message = await done;
      const voiced = message.media?.some((item) => item.voice) ?? false;
      if (tts.auto === 'always' && !voiced)
        throw new Error(
          `tts bench: the reply went without a voice note: ${kernel.logs
            .filter((r) => r.level !== 'debug')
            .map((r) => r.message)
            .join(' / ')}`,
        );
      if (i > 0) times.push(performance.now() - started); // the first loads the plugins
    }
    return times;
  } finally {
    await kernel.dispose();
  }
}

export async function ttsBench(line: Line, quick: boolean): Promise<void> {
  const count = quick ? 5 : 20;
  const speech = new FakeSpeechServer();
  speech.answer = { audio: spokenMp3(REPLY), contentType: 'audio/mpeg' };
  await speech.start();
  try {
    const off = median(await turns({ auto: 'off' }, count));
    const cli = median(
      await turns(
        {
          auto: 'always',
          provider: 'tts-local-cli',
          providers: {
            'tts-local-cli': { command: 'espeak-ng', args: ['-w', '{{OutputPath}}', '{{Text}}'], outputFormat: 'wav' },
          },
        },
        count,
      ),
    );
    const fake = median(
      await turns(
        {
          auto: 'always',
          provider: 'openai',
          providers: { openai: { baseUrl: `${speech.baseUrl}/v1`, apiKey: 'bench' } },
        },
        count,
      ),
    );
    line('tts: reply turn, TTS off, p50', `${off.toFixed(1)} ms`, '(info)', true);
    line('  local CLI (espeak-ng) + ffmpeg: added p50', `${(cli - off).toFixed(1)} ms`, '(info)', true);
    line('  instant OpenAI-compatible fake + ffmpeg: added p50', `${(fake - off).toFixed(1)} ms`, '(info)', true);
  } finally {
    await speech.stop();
  }
}
