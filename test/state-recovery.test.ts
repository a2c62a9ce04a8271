/**
 * Nothing lost (issue 27): state that a crash or a bad edit left unreadable is kept aside
 * and rebuilt from what is still whole, instead of stopping the gateway's work. The process
 * test runs the built `claw gateway` against a fake model on 127.0.0.1.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectOperator, writeConfig } from './bench/crash.js';
import { startFakeLlm } from './fakes/llm-server.js';
import { startCliGateway, tempDir } from './helpers.js';

describe('a session store that does not parse', () => {
  it('is kept aside at the gateway, rebuilt from the transcripts, and the next run continues the session', async () => {
    const fake = await startFakeLlm();
    try {
      fake.respond(() => ({ text: 'Miso, as you said.' }));
      const stateDir = tempDir('claw-recover-gw-');
      writeConfig(stateDir, fake);
      const sessions = join(stateDir, 'agents', 'main', 'sessions');
      mkdirSync(sessions, { recursive: true, mode: 0o700 });
      const line = (entry: Record<string, unknown>) => `${JSON.stringify(entry)}\n`;
      const timestamp = new Date().toISOString();
      const message = (id: string, parentId: string | null, role: string, text: string) =>
        line({
          type: 'message',
          id,
          parentId,
          timestamp,
          message: { role, content: [{ type: 'text', text }], timestamp: Date.now() },
        });
      const header = (id: string, extra: Record<string, unknown> = {}) =>
        line({ type: 'session', version: 1, id, timestamp, ...extra });
      // One transcript names its key; one was written before headers did.
      const alpha =
        header('sess-alpha', { sessionKey: 'agent:main:alpha' }) + message('a1', null, 'user', 'my cat is called Miso');
      writeFileSync(join(sessions, 'sess-alpha.jsonl'), alpha + message('a2', 'a1', 'assistant', 'Noted.'), {
        mode: 0o600,
      });
      const legacy = header('sess-legacy') + message('l1', null, 'user', 'an older conversation');
      writeFileSync(join(sessions, 'sess-legacy.jsonl'), legacy, { mode: 0o600 });
      const damaged = '{"agent:main:alpha": {"sessionId": "sess-al';
      writeFileSync(join(sessions, 'sessions.json'), damaged, { mode: 0o600 });

      const gw = await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
      const client = await connectOperator(gw.port);
      try {
        const params = {
          message: "what is my cat's name?",
          sessionKey: 'agent:main:alpha',
          idempotencyKey: 'recover-1',
        };
        const answer = await client.request<{ status: string; summary?: string }>('agent', params, {
          expectFinal: true,
        });
        expect(answer).toMatchObject({ status: 'ok', summary: 'Miso, as you said.' });
        // The run continued the rebuilt session: its history reached the model.
        expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('my cat is called Miso');

        const listed = await client.request<{ sessions: Array<{ key: string; sessionId: string }> }>(
          'sessions.list',
          {},
        );
        expect(listed.sessions.map((row) => [row.key, row.sessionId]).sort()).toEqual([
          ['agent:main:alpha', 'sess-alpha'],
          ['agent:main:recovered:sess-legacy', 'sess-legacy'],
        ]);
        const kept = readdirSync(sessions).filter((name) => /^sessions\.json\.corrupt-\d+$/.test(name));
        expect(kept).toHaveLength(1);
        expect(readFileSync(join(sessions, kept[0]!), 'utf8')).toBe(damaged);
        expect(statSync(join(sessions, kept[0]!)).mode & 0o777).toBe(0o600);
        expect(gw.stdout()).toContain(
          `kept it as ${join(sessions, kept[0]!)} and rebuilt the store from the 2 transcript(s)`,
        );
        const transcript = readFileSync(join(sessions, 'sess-alpha.jsonl'), 'utf8');
        expect(transcript).toContain('Miso, as you said.');
      } finally {
        await client.close().catch(() => {});
        gw.child.kill('SIGTERM');
        await gw.exited;
      }
    } finally {
      await fake.close();
    }
  }, 30_000);
});
