/**
 * OpenClaw session features claw does not have (sharing, suggestions, discussions, the
 * companion, GitHub publication, catalogs, placement, groups, cold storage, meeting
 * transcripts) and the channel actions its channels cannot do: reads answer OpenClaw's empty
 * shapes for a session that exists, anything that would change or start something answers
 * a clear error naming what claw lacks — never "unknown method", never a pretended success.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import type { ChannelAccountContext } from '../sdk/channels/index.js';
import { definePlugin } from '../sdk/index.js';
import { runAgent, startAgent, type AgentHarness } from './agent-helpers.js';
import { client, refusal } from './gateway-helpers.js';

const sent: Array<{ to: string; text: string }> = [];
const outbox = definePlugin({
  id: 'outbox-chat',
  register(api) {
    api.registerChannel({
      id: 'outbox-chat',
      label: 'Outbox chat',
      textLimit: 500,
      async start(_ctx: ChannelAccountContext) {},
      async send(message) {
        sent.push({ to: message.to, text: message.text ?? '' });
        return { messageId: `m${sent.length}` };
      },
    });
  },
});

let h: AgentHarness;
let reader: GatewayClient;
const SESSION = 'agent:main:main';

beforeAll(async () => {
  h = await startAgent({ plugins: [outbox], config: { channels: { 'outbox-chat': {} } } });
  reader = await client(h.gw.url, { scopes: ['operator.read'] });
  // The first calls load the agent and sessions plugins: on a busy machine that is slow.
  await h.client.request('chat.history', { sessionKey: 'main' }, { timeoutMs: 150_000 });
  await reader.request('sessions.list', {}, { timeoutMs: 150_000 });
  h.fake.script({ text: 'hello' });
  await runAgent(h.client, { message: 'hi' });
}, 180_000);

afterAll(async () => {
  await reader?.close();
  await h?.stop();
});

/**
 * The error a request ends with. Under vitest the plugins are loaded apart from the
 * gateway's SDK instance, so a plugin's INVALID_REQUEST reaches the wire wrapped as
 * UNAVAILABLE "<method> failed: …" (the built gateway sends the code as thrown): messages are
 * matched by their text, codes where the gateway itself answers.
 */

describe('reads answer OpenClaw’s empty shapes', () => {
  it('sharing, suggestions, discussion, companion, GitHub: nothing for a session that exists', async () => {
    const target = { sessionKey: SESSION };
    expect(await reader.request('session.members.listEvidence', target)).toEqual({
      sessionKey: SESSION,
      members: [],
      identities: [],
      role: 'owner',
      allowedVisibilities: [],
    });
    expect(await reader.request('session.suggestions.list', target)).toEqual({ suggestions: [], role: 'owner' });
    expect(await reader.request('session.discussion.info', target)).toEqual({ state: 'none' });
    expect(await reader.request('sessions.companion.state', target)).toEqual({ exchanges: [] });
    expect(await reader.request('sessions.github.options', target)).toEqual({
      personal: null,
      shared: null,
      pendingPersonal: null,
      latestShared: null,
    });
    // A new chat's session is not written yet: the same empty answers.
    expect(await reader.request('session.suggestions.list', { sessionKey: 'agent:main:nowhere' })).toEqual({
      suggestions: [],
      role: 'owner',
    });
  });

  it('catalogs, groups, storage, transcripts, activity summaries, titles', async () => {
    expect(await reader.request('sessions.catalog.list', {})).toEqual({ catalogs: [] });
    expect(await reader.request('sessions.groups.list', {})).toEqual({ groups: [], sectionOrder: [] });
    expect(await h.client.request('sessions.groups.defaults', {})).toEqual({ defaults: [] });
    const storage: any = await h.client.request('sessions.storage.status', {});
    expect(storage.agents).toEqual([
      {
        agentId: 'main',
        storePath: expect.stringMatching(/sessions\.json$/),
        hotTranscripts: 1,
        coldTranscripts: 0,
        databaseBytes: 0,
        walBytes: 0,
        archiveBytes: 0,
        embeddedArchiveBytes: 0,
      },
    ]);
    expect(storage.maintenance).toEqual({
      running: false,
      lastStartedAt: null,
      lastCompletedAt: null,
      lastError: null,
      archivedTranscripts: 0,
      externalizedTranscripts: 0,
    });
    expect(await refusal(reader.request('sessions.storage.status', {}))).toMatchObject({ code: 'FORBIDDEN' });
    expect(await reader.request('transcripts.status', {})).toEqual({ enabled: false, providers: [] });
    expect(await reader.request('transcripts.list', { limit: 20 })).toEqual({ sessions: [], nextCursor: null });
    expect(await refusal(reader.request('transcripts.get', { selector: 'meeting-1' }))).toEqual({
      code: expect.any(String),
      message: expect.stringContaining(
        'unknown transcript selector: claw has no meeting transcripts (no transcription provider)',
      ),
    });
    expect(await h.client.request('sessions.activitySummary.ensure', { sessions: [{ key: SESSION }] })).toEqual({
      sessions: [{ key: SESSION, agentId: 'main', activitySummary: { canEnsure: false, state: 'unavailable' } }],
    });
    expect(await h.client.request('sessions.title.prepare', { agentId: 'main', message: 'plan a trip' })).toEqual({
      title: null,
    });
  });
});

describe('changes and starts are refused with the reason', () => {
  it.each([
    ['session.members.add', 'operator.write', 'claw has no shared sessions'],
    ['session.visibility.set', 'operator.write', 'claw has no shared sessions'],
    ['session.publicShare.set', 'operator.write', 'claw has no shared sessions'],
    ['session.suggestions.add', 'operator.write', 'nobody suggests messages'],
    ['session.typing', 'operator.write', 'nobody suggests messages or shows typing'],
    ['session.discussion.open', 'operator.write', 'claw has no session discussions'],
    ['sessions.companion.ask', 'operator.read', 'claw has no session companion'],
    ['sessions.github.publish', 'operator.write', 'claw does not publish sessions to GitHub'],
    ['sessions.catalog.continue', 'operator.write', 'claw has no session catalogs'],
    ['sessions.catalog.startTerminal', 'operator.admin', 'claw has no terminal sessions'],
    ['sessions.dispatch', 'operator.write', 'claw runs every session on this gateway'],
    ['sessions.assignOwner', 'operator.write', 'claw has no session owners'],
    ['sessions.groups.put', 'operator.write', 'claw has no custom session groups'],
    ['sessions.storage.run', 'operator.admin', 'claw has no cold storage of transcripts'],
    ['sessions.providerReview.continue', 'operator.write', 'claw has no provider reviews'],
    ['sessions.rewind', 'operator.admin', 'claw does not rewind sessions'],
    ['sessions.recover', 'operator.write', 'claw leaves no sessions to recover'],
    ['transcripts.summarize', 'operator.write', 'claw has no meeting transcripts'],
  ])('%s: UNAVAILABLE (%s)', async (method, _scope, reason) => {
    const error = await refusal(h.client.request(method, { sessionKey: SESSION }));
    expect(error?.code).toBe('UNAVAILABLE');
    expect(error?.message).toContain(reason);
  });

  it('scopes stay OpenClaw’s: a read-only client cannot even ask to change', async () => {
    expect(
      await refusal(reader.request('session.members.add', { sessionKey: SESSION, identityId: 'x' })),
    ).toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('channel actions', () => {
  it('message.action send goes out through the channel; other actions and polls are refused', async () => {
    const result: any = await h.client.request('message.action', {
      channel: 'outbox-chat',
      action: 'send',
      params: { target: 'room-1', message: 'hello room' },
      idempotencyKey: 'act-1',
    });
    expect(result).toEqual({ runId: 'act-1', messageId: 'm1', channel: 'outbox-chat', messageIds: ['m1'] });
    expect(sent).toEqual([{ to: 'room-1', text: 'hello room' }]);
    expect(
      await refusal(
        h.client.request('message.action', {
          channel: 'outbox-chat',
          action: 'react',
          params: { messageId: 'm1', emoji: '👍' },
          idempotencyKey: 'act-2',
        }),
      ),
    ).toEqual({
      code: expect.any(String),
      message: expect.stringContaining('Channel outbox-chat does not support action react.'),
    });
    expect(
      await refusal(
        h.client.request('poll', {
          to: 'room-1',
          question: 'lunch?',
          options: ['yes', 'no'],
          channel: 'outbox-chat',
          idempotencyKey: 'poll-1',
        }),
      ),
    ).toEqual({
      code: expect.any(String),
      message: expect.stringContaining("unsupported poll channel: outbox-chat (claw's channels send no polls)"),
    });
  });
});
