/**
 * Frames recorded from OpenClaw 2026.9.6's own clients (its CLI, TUI and the backend client
 * its commands use), replayed against claw's gateway: the connect frames are admitted (with
 * scopes claw does not know left out of the grant), and every recorded request for a method
 * claw serves is accepted with OpenClaw's optional params. Fast: one in-process gateway.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentHarness } from './agent-helpers.js';
import { connectFrame, rawSocket, TEST_TOKEN } from './gateway-helpers.js';
import { REPO } from './helpers.js';

const FIXTURES = join(REPO, 'test', 'fixtures', 'openclaw-frames');
const connects = JSON.parse(readFileSync(join(FIXTURES, 'connect.json'), 'utf8')) as Array<{
  params: Record<string, any>;
}>;
const requests = JSON.parse(readFileSync(join(FIXTURES, 'requests.json'), 'utf8')) as Array<{
  client: string;
  frame: { method: string; params?: Record<string, unknown> };
}>;

/** Methods OpenClaw's clients call that claw does not have (see docs/openclaw-methods.md). */
const NOT_IN_CLAW = new Set([
  'doctor.memory.status',
  'commands.list',
  // Served, answering UNAVAILABLE as an OpenClaw gateway without a session observer does.
  'sessions.observer.visibility',
]);

let h: AgentHarness;
beforeAll(async () => {
  h = await startAgent({ plugins: ['cron', 'skills', 'heartbeat'].map((id) => join(REPO, 'plugins', id)) });
  h.fake.respond(() => ({ text: 'Hello from the fake model.' }));
});
afterAll(() => h?.stop());

/** A raw socket that sent the recorded connect (with this gateway's token) and got hello-ok. */
async function connected(params: Record<string, any>) {
  const socket = await rawSocket(h.gw.url);
  socket.send({ type: 'req', id: 'c1', method: 'connect', params: { ...params, auth: { token: TEST_TOKEN } } });
  const hello = await socket.next((frame) => frame.id === 'c1');
  return { socket, hello };
}

describe('recorded OpenClaw connect frames', () => {
  it.each(connects.map((frame) => [`${frame.params.client.id} (${frame.params.client.mode})`, frame.params]))(
    '%s is admitted',
    async (_name, params) => {
      const { socket, hello } = await connected(params);
      expect(hello.ok, JSON.stringify(hello.error)).toBe(true);
      expect(hello.payload.auth.scopes).toEqual(
        params.scopes.filter((scope: string) => scope !== 'operator.questions'),
      );
      socket.ws.close();
    },
  );

  it('ignores scopes it does not know (the Control UI asks for operator.questions) instead of refusing', async () => {
    const { socket, hello } = await connected({
      ...connectFrame().params,
      scopes: ['operator.read', 'operator.questions', 'operator.talk.secrets'],
    });
    expect(hello.ok).toBe(true);
    expect(hello.payload.auth.scopes).toEqual(['operator.read']);
    socket.ws.close();
  });

  it('hello-ok lists the methods and events of plugins that have not loaded yet, and the capabilities', async () => {
    const { socket, hello } = await connected(connects[0]!.params);
    const features = hello.payload.features;
    // The cron plugin loads on first use: its event comes from its manifest.
    expect(features.events).toEqual(
      expect.arrayContaining(['agent', 'chat', 'cron', 'sessions.changed', 'session.message']),
    );
    expect(features.methods).toEqual(
      expect.arrayContaining([
        'sessions.subscribe',
        'sessions.messages.subscribe',
        'agents.list',
        'agent.identity.get',
        'models.list',
      ]),
    );
    expect(features.capabilities).toEqual(['published-model-catalog']);
    socket.ws.close();
  });
});

describe('recorded OpenClaw requests', () => {
  const served = requests.filter(({ frame }) => !NOT_IN_CLAW.has(frame.method));
  it.each(served.map(({ client, frame }) => [`${frame.method} ${JSON.stringify(frame.params ?? {})}`, client, frame]))(
    '%s (from %s) is accepted',
    async (_name, _client, frame) => {
      const tui = connects.find((candidate) => candidate.params.client.id === 'openclaw-tui')!;
      const { socket } = await connected(tui.params);
      const params = JSON.parse(
        JSON.stringify(frame.params ?? {}).replaceAll('<idempotency key>', `k-${Math.random()}`),
      );
      socket.send({ type: 'req', id: 'r1', method: frame.method, params });
      const answer = await socket.next(
        (reply) => reply.id === 'r1' && !(reply.ok && reply.payload?.status === 'accepted'),
        15_000,
      );
      expect(answer.ok, JSON.stringify(answer.error)).toBe(true);
      socket.ws.close();
    },
  );

  it('idempotencyKey is optional where OpenClaw has it optional, and honoured when sent', async () => {
    const { socket } = await connected(
      connects.find((candidate) => candidate.params.client.id === 'openclaw-tui')!.params,
    );
    const job = {
      name: 'nightly',
      schedule: { kind: 'cron', expr: '0 3 * * *' },
      sessionTarget: 'isolated',
      wakeMode: 'next-heartbeat',
      payload: { kind: 'agentTurn', message: 'hi' },
    };
    socket.send({ type: 'req', id: 'a1', method: 'cron.add', params: job });
    const plain = await socket.next((reply) => reply.id === 'a1');
    expect(plain.ok, JSON.stringify(plain.error)).toBe(true);
    socket.send({
      type: 'req',
      id: 'a2',
      method: 'cron.add',
      params: { ...job, name: 'keyed', idempotencyKey: 'same' },
    });
    socket.send({
      type: 'req',
      id: 'a3',
      method: 'cron.add',
      params: { ...job, name: 'keyed', idempotencyKey: 'same' },
    });
    const [first, again] = [
      await socket.next((reply) => reply.id === 'a2'),
      await socket.next((reply) => reply.id === 'a3'),
    ];
    expect(again.payload.id).toBe(first.payload.id);
    socket.send({ type: 'req', id: 'l1', method: 'cron.list', params: { limit: 200, offset: 0 } });
    const page = await socket.next((reply) => reply.id === 'l1');
    expect(page.payload.jobs.filter((listed: { name: string }) => listed.name === 'keyed')).toHaveLength(1);
    expect(page.payload).toMatchObject({
      total: page.payload.jobs.length,
      offset: 0,
      limit: 200,
      hasMore: false,
      nextOffset: null,
      snapshotRevision: expect.any(String),
    });
    socket.ws.close();
  });
});
