/**
 * The automation plugins together, as a user runs them: webhooks and cron hand work to the
 * real heartbeat plugin's system-events queue, and the heartbeat turn that follows sees it.
 * (Each plugin's own tests use a stand-in for the others.)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventFrame } from '../sdk/generated/protocol.js';
import type { RecordedRequest } from './fakes/llm-server.js';
import { idem, startAgent, until, type AgentHarness } from './agent-helpers.js';
import { REPO, tempDir } from './helpers.js';

const HEARTBEAT = join(REPO, 'plugins', 'heartbeat');
const HOOKS = join(REPO, 'plugins', 'hooks');
const HOOK_TOKEN = 'hook-token-0123456789abcdefghijklmnop';

const harnesses: AgentHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.stop();
});

const heartbeats = (events: EventFrame[]) =>
  events.filter((frame) => frame.event === 'heartbeat').map((frame) => frame.payload as Record<string, any>);
const lastUser = (request: RecordedRequest) =>
  JSON.stringify(
    (request.body.messages as Array<{ role: string; content: unknown }>)
      .filter((message) => message.role === 'user')
      .at(-1)?.content,
  );
const queueFile = (h: AgentHarness) => join(h.gw.stateDir, 'system-events', 'queue.json');

describe('webhooks → heartbeat', { timeout: 45_000 }, () => {
  it('POST /hooks/wake queues a durable system event and the heartbeat turn it wakes sees it', async () => {
    const h = await startAgent({
      plugins: [HEARTBEAT, HOOKS],
      config: {
        hooks: { enabled: true, token: HOOK_TOKEN },
        agents: { defaults: { heartbeat: { every: '0m', target: 'none' } } },
      },
    });
    harnesses.push(h);
    h.fake.script({ text: 'HEARTBEAT_OK' });
    const response = await fetch(`http://127.0.0.1:${h.gw.port}/hooks/wake`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${HOOK_TOKEN}` },
      body: JSON.stringify({ text: 'Backup job finished with 2 warnings', mode: 'now' }),
    });
    expect(response.status).toBe(200);
    await until(() => heartbeats(h.events).length >= 1, 20_000, 'the heartbeat the webhook woke');
    expect(heartbeats(h.events)[0]).toMatchObject({ trigger: 'hook:wake', systemEvents: 1 });
    expect(lastUser(h.fake.requests[0]!)).toMatch(/System: \[[^\]]+\].*Backup job finished with 2 warnings/);
    await until(() => !readFileSync(queueFile(h), 'utf8').includes('Backup job'), 5000, 'the event consumed');
  });
});

describe('cron → heartbeat', { timeout: 45_000 }, () => {
  it('a main-session cron job reaches the model through the heartbeat, even with an empty HEARTBEAT.md', async () => {
    const CRON = join(REPO, 'plugins', 'cron');
    const stateDir = tempDir('claw-auto-');
    mkdirSync(join(stateDir, 'workspace'), { recursive: true });
    // Comments and headings only: scheduled heartbeats skip the model, cron's wake must not.
    writeFileSync(join(stateDir, 'workspace', 'HEARTBEAT.md'), '# Heartbeat\n<!-- nothing to check -->\n');
    const h = await startAgent({
      stateDir,
      plugins: [HEARTBEAT, CRON],
      config: { agents: { defaults: { heartbeat: { every: '30m', target: 'none' } } } },
    });
    harnesses.push(h);
    h.fake.script({ text: 'HEARTBEAT_OK' });
    const job = (await h.client.request('cron.add', {
      idempotencyKey: idem(),
      name: 'stretch',
      schedule: { kind: 'at', at: new Date(Date.now() + 300).toISOString() },
      sessionTarget: 'main',
      wakeMode: 'now',
      payload: { kind: 'systemEvent', text: 'Reminder: stand up and stretch' },
    })) as { id: string };
    await until(() => heartbeats(h.events).some((beat) => beat.systemEvents === 1), 20_000, 'the heartbeat cron woke');
    expect(lastUser(h.fake.requests[0]!)).toMatch(/System: \[[^\]]+\].*Reminder: stand up and stretch/);
    const runs = (await h.client.request('cron.runs', { id: job.id })) as { entries: Array<Record<string, unknown>> };
    expect(runs.entries.at(-1)).toMatchObject({ jobId: job.id, status: 'ok' });
    expect(h.fake.requests).toHaveLength(1);
  });
});
