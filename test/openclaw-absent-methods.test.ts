/**
 * OpenClaw methods for features claw does not have (boards, canvas, artifacts, talk, voice
 * wake, push, projects, worktrees, terminals, desktops, portals, attach grants, Claw packages,
 * user profiles), answered by a real claw gateway: reads give OpenClaw's shape with its empty
 * values, changes are UNAVAILABLE naming what claw lacks, required params are still checked, and
 * each method keeps OpenClaw's scope.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { client, startGateway, type RunningGateway, refusal } from './gateway-helpers.js';

let gw: RunningGateway;
let admin: GatewayClient;
let writer: GatewayClient;
let reader: GatewayClient;

beforeAll(async () => {
  gw = await startGateway();
  admin = await client(gw.url);
  writer = await client(gw.url, { scopes: ['operator.read', 'operator.write'] });
  reader = await client(gw.url, { scopes: ['operator.read'] });
}, 60_000);

afterAll(async () => {
  await Promise.all([admin, writer, reader].map((c) => c?.close()));
  await gw?.stop();
});

describe('reads answer OpenClaw’s empty shapes', () => {
  it('boards, canvas documents and artifacts', async () => {
    expect(await reader.request('board.get', { sessionKey: 'agent:main:main' })).toEqual({
      sessionKey: 'agent:main:main',
      revision: 0,
      tabs: [],
      widgets: [],
    });
    expect(await reader.request('artifacts.list', { sessionKey: 'agent:main:main', type: 'image', limit: 4 })).toEqual({
      artifacts: [],
    });
    expect(await refusal(reader.request('artifacts.list', {}))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'artifacts require one of sessionKey, runId, or taskId',
    });
    expect(await refusal(reader.request('artifacts.download', { sessionKey: 'k', artifactId: 'a1' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'artifact not found',
    });
    expect(
      await refusal(
        reader.request('board.widget.appView', { sessionKey: 'k', name: 'chart', revision: 1, instanceId: 'i' }),
      ),
    ).toEqual({ code: 'INVALID_REQUEST', message: 'board MCP App widget not found: chart' });
    expect(await refusal(reader.request('board.data.read', { ticket: 't', bindingId: 'b' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'unknown board view ticket: claw has no session boards',
    });
    expect(await refusal(reader.request('canvas.document.view', { docId: 'd' }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw has no canvas documents',
    });
  });

  it('talk and voice wake (text-to-speech is the tts plugin: test/tts.test.ts)', async () => {
    expect(await reader.request('talk.catalog', {})).toEqual({
      modes: [],
      transports: [],
      brains: [],
      speech: { providers: [] },
      transcription: { ready: false, providers: [] },
      realtime: { ready: false, providers: [] },
    });
    expect(await reader.request('talk.config', { includeSecrets: false })).toEqual({ config: {} });
    expect(await reader.request('voicewake.get', {})).toEqual({ triggers: [] });
  });

  it('projects, worktrees, terminals and portals', async () => {
    expect(await reader.request('projects.list', { includeObserved: true })).toEqual({ projects: [] });
    expect(await reader.request('worktrees.list', {})).toEqual({ worktrees: [] });
    expect(await reader.request('portal.list', {})).toEqual({ portals: [] });
    expect(await admin.request('terminal.list', {})).toEqual({ sessions: [] });
    // Closing, releasing or revoking what was never handed out does nothing, and says so.
    expect(await admin.request('terminal.close', { sessionId: 's1' })).toEqual({ ok: false });
    expect(await admin.request('desktop.release', { wsPath: '/desktop/x' })).toEqual({ released: false });
    expect(await admin.request('attach.revoke', { token: 'tok' })).toEqual({ revoked: false });
  });

  it('users: no profiles, no mentionable people, preferences without a durable identity', async () => {
    expect(await reader.request('users.list', {})).toEqual({ profiles: [] });
    expect(await reader.request('users.mentionable', { sessionKey: 'k', query: 'ad' })).toEqual({
      users: [],
      truncated: false,
    });
    expect(await reader.request('users.prefs.get', { keys: ['ui.accent'] })).toEqual({ status: 'no_durable_identity' });
    expect(await writer.request('users.prefs.set', { entries: { 'ui.accent': 'blue' } })).toEqual({
      status: 'no_durable_identity',
    });
    for (const method of ['users.self', 'users.github.status', 'users.listModelAccounts']) {
      const refused = await refusal(reader.request(method, {}));
      expect(refused?.code, method).toBe('FORBIDDEN');
      expect(refused?.message).toContain(`${method} requires an authenticated user: claw has no user profiles`);
    }
  });
});

describe('changes are UNAVAILABLE, naming what claw lacks', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['board.action', { sessionKey: 'k' }, 'claw has no session boards'],
    ['board.event', { sessionKey: 'k' }, 'claw has no session boards'],
    ['canvas.document.preview', { html: '<p>hi</p>' }, 'claw has no canvas host'],
    ['talk.session.create', {}, 'claw has no talk sessions (realtime voice)'],
    ['talk.client.create', {}, 'claw has no talk sessions (realtime voice)'],
    ['talk.voice.get', {}, 'claw has no talk sessions (realtime voice)'],
    ['voicewake.set', { triggers: ['claw'] }, 'claw has no voice wake'],
    ['push.web.vapidPublicKey', {}, 'claw has no web push notifications'],
    ['push.web.subscribe', { subscription: {} }, 'claw has no web push notifications'],
    ['push.test', { nodeId: 'n1' }, 'claw has no push notifications'],
    ['projects.add', { url: 'https://example.invalid/r.git' }, 'claw has no project registry'],
    ['worktrees.create', { repoRoot: '/tmp/r' }, 'claw has no managed worktrees'],
    ['worktrees.gc', {}, 'claw has no managed worktrees'],
    ['terminal.attach', { sessionId: 's1' }, 'claw has no terminal sessions'],
    ['desktop.observe', { source: { kind: 'host' } }, 'claw has no remote desktops'],
    ['portal.close', { id: 'p1' }, 'claw has no port portals'],
    ['attach.grant', { agentId: 'main' }, 'claw has no attach grants (external harnesses cannot borrow its tools)'],
    ['claws.packages.remove', {}, 'claw has no Claw packages'],
  ];
  it.each(cases)('%s', async (method, params, message) => {
    expect(await refusal(admin.request(method, params))).toEqual({ code: 'UNAVAILABLE', message });
  });

  it('required params are checked before saying so', async () => {
    expect(await refusal(admin.request('worktrees.create', {}))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'worktrees.create requires repoRoot (a non-empty string)',
    });
    expect(await refusal(admin.request('voicewake.set', { triggers: 'claw' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'voicewake.set requires triggers: string[]',
    });
    expect(await refusal(reader.request('board.get', {}))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'board.get requires sessionKey (a non-empty string)',
    });
  });
});

describe('OpenClaw’s scopes', () => {
  it('refuses callers without them', async () => {
    const missing = async (c: GatewayClient, method: string) => (await refusal(c.request(method, {})))?.message;
    expect(await missing(reader, 'board.event')).toBe('missing scope: operator.write');
    expect(await missing(writer, 'terminal.list')).toBe('missing scope: operator.admin');
    expect(await missing(writer, 'talk.session.create')).toBe('missing scope: operator.talk');
    expect(await missing(reader, 'users.prefs.set')).toBe('missing scope: operator.write');
    expect(await missing(writer, 'projects.register')).toBe('missing scope: operator.admin');
  });
});
