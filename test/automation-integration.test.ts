/**
 * The automation plugins together, as a user runs them: webhooks and cron hand work to the
 * real heartbeat plugin's system-events queue, and the heartbeat turn that follows sees it.
 * (Each plugin's own tests use a stand-in for the others.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventFrame } from '../sdk/protocol/schema.js';
import type { RecordedRequest } from './fakes/llm-server.js';
import { startAgent, until, type AgentHarness } from './agent-helpers.js';
import { REPO } from './helpers.js';

const HEARTBEAT = join(REPO, 'plugins', 'heartbeat');
const HOOKS = join(REPO, 'plugins', 'hooks');
const HOOK_TOKEN = 'hook-token-0123456789abcdefghijklmnop';

const harnesses: AgentHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.stop();
});

const heartbeats = (events: EventFrame[]) => events.filter((frame) => frame.event === 'heartbeat').map((frame) => frame.payload as Record<string, any>);
const lastUser = (request: RecordedRequest) =>
  JSON.stringify((request.body.messages as Array<{ role: string; content: unknown }>).filter((message) => message.role === 'user').at(-1)?.content);
const queueFile = (h: AgentHarness) => join(h.gw.stateDir, 'system-events', 'queue.json');

describe('webhooks → heartbeat', { timeout: 45_000 }, () => {
  it('POST /hooks/wake queues a durable system event and the heartbeat turn it wakes sees it', async () => {
    const h = await startAgent({
      plugins: [HEARTBEAT, HOOKS],
      config: { hooks: { enabled: true, token: HOOK_TOKEN }, agents: { defaults: { heartbeat: { every: '0m', target: 'none' } } } },
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
