/**
 * OpenClaw's group-B methods the gateway plugin answers, against a real gateway: fs.listDir's
 * containment (write scope stays inside agent workspaces, symlinks do not lead out),
 * tools.effective after the tool policy, memory.search and doctor.memory over the memory
 * slot, gateway.restart.request (in place under `claw gateway`, refused without it), the absent GitHub identity,
 * plugin approvals and memory import, and plugins.changed when a plugin is turned off.
 */
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../apps/cli/gateway-client.js';
import { generateDeviceIdentity } from '../sdk/device-auth.js';
import type { EventFrame } from '../sdk/index.js';
import { client, startGateway, type RunningGateway, refusal } from './gateway-helpers.js';
import { REPO, startCliGateway, tempDir, waitFor } from './helpers.js';

let gw: RunningGateway;
let admin: GatewayClient;
let writer: GatewayClient;
let reader: GatewayClient;
let workspace: string;
let outside: string;
const events: EventFrame[] = [];
let eventArrived: () => void = () => {};

beforeAll(async () => {
  const stateDir = tempDir('claw-host-group-b-');
  workspace = join(stateDir, 'workspace');
  outside = tempDir('claw-host-group-b-outside-');
  mkdirSync(join(workspace, 'alpha', 'deeper'), { recursive: true });
  mkdirSync(join(workspace, '.hidden'), { recursive: true });
  mkdirSync(join(outside, 'secret-folder'), { recursive: true });
  writeFileSync(join(workspace, 'notes.txt'), 'not a folder\n');
  symlinkSync(join(workspace, 'alpha'), join(workspace, 'inner-link'));
  symlinkSync(outside, join(workspace, 'escape-link'));
  writeFileSync(join(workspace, 'MEMORY.md'), '# Memory\n\n- The garage code is 4711.\n');
  writeFileSync(join(workspace, 'DREAMS.md'), 'A diary the workspace keeps.\n');
  gw = await startGateway({
    stateDir,
    plugins: ['example-clock', 'memory-sqlite', 'memory-core', 'memory-sqlite-engine', 'embeddings'].map((id) =>
      join(REPO, 'plugins', id),
    ),
    config: {
      agents: {
        list: [
          { id: 'main', default: true },
          { id: 'work', tools: { deny: ['clock_now'] } },
        ],
        defaults: { memorySearch: { provider: 'none', sync: { watch: false } } },
      },
    },
  });
  admin = await client(gw.url, {
    onEvent: (frame) => {
      events.push(frame);
      eventArrived();
    },
  });
  writer = await client(gw.url, { scopes: ['operator.write'] });
  reader = await client(gw.url, { scopes: ['operator.read'] });
}, 60_000);

afterAll(async () => {
  await reader?.close();
  await writer?.close();
  await admin?.close();
  await gw?.stop();
});

function nextEvent(name: string): Promise<EventFrame> {
  return new Promise((resolve) => {
    const check = () => {
      const found = events.find((frame) => frame.event === name);
      if (found) resolve(found);
      else eventArrived = check;
    };
    check();
  });
}

describe('fs.listDir', () => {
  it('lists a workspace’s folders for write scope: hidden last, files skipped, symlinks only when they stay inside', async () => {
    const root = realpathSync(workspace);
    const listed: any = await writer.request('fs.listDir', {});
    expect(listed).toEqual({
      path: root,
      home: homedir(),
      entries: [
        { name: 'alpha', path: join(root, 'alpha') },
        { name: 'inner-link', path: join(root, 'inner-link') },
        { name: '.hidden', path: join(root, '.hidden'), hidden: true },
      ],
    });
    const deeper: any = await writer.request('fs.listDir', { path: join(workspace, 'alpha') });
    expect(deeper).toEqual({
      path: join(root, 'alpha'),
      parent: root,
      home: homedir(),
      entries: [{ name: 'deeper', path: join(root, 'alpha', 'deeper') }],
    });
  });

  it('refuses write scope outside the workspaces, through .. or a symlink; admins browse anywhere', async () => {
    const forbidden = { code: 'FORBIDDEN', message: 'missing scope: operator.admin' };
    expect(await refusal(writer.request('fs.listDir', { path: outside }))).toEqual(forbidden);
    expect(await refusal(writer.request('fs.listDir', { path: join(workspace, '..') }))).toEqual(forbidden);
    expect(await refusal(writer.request('fs.listDir', { path: join(workspace, 'escape-link') }))).toEqual(forbidden);
    expect(await refusal(writer.request('fs.listDir', { path: 'alpha' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'fs.listDir path must be absolute',
    });
    expect((await refusal(reader.request('fs.listDir', {}))).code).toBe('FORBIDDEN');

    const anywhere: any = await admin.request('fs.listDir', { path: outside });
    expect(anywhere.entries).toEqual([{ name: 'secret-folder', path: join(outside, 'secret-folder') }]);
    expect(anywhere.parent).toBeTypeOf('string');
    // Relayed to the node (through the node command policy): there is no node n1.
    expect(await refusal(admin.request('fs.listDir', { nodeId: 'n1' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'unknown node "n1"',
    });
    expect(await refusal(writer.request('fs.listDir', { nodeId: 'n1' }))).toEqual(forbidden);
  });
});

describe('tools.effective', () => {
  it('lists the tools a session’s turn gets after the agent’s tool policy', async () => {
    const ids = (answer: any) => answer.groups.flatMap((group: any) => group.tools.map((tool: any) => tool.id));
    const main: any = await reader.request('tools.effective', { sessionKey: 'agent:main:main' });
    expect(main).toMatchObject({ agentId: 'main', profile: 'full', groups: expect.any(Array) });
    expect(ids(main)).toContain('clock_now');
    const clock = main.groups.flatMap((group: any) => group.tools).find((tool: any) => tool.id === 'clock_now');
    expect(clock).toEqual({
      id: 'clock_now',
      label: 'clock_now',
      description: expect.any(String),
      rawDescription: expect.any(String),
      source: expect.stringMatching(/^(core|plugin)$/),
    });
    for (const group of main.groups)
      expect(group).toEqual({
        id: group.source,
        label: expect.any(String),
        source: group.source,
        tools: expect.any(Array),
      });

    const work: any = await reader.request('tools.effective', { sessionKey: 'agent:work:main' });
    expect(work.agentId).toBe('work');
    expect(ids(work)).not.toContain('clock_now');
    expect(
      await refusal(reader.request('tools.effective', { agentId: 'main', sessionKey: 'agent:work:main' })),
    ).toEqual({
      code: 'INVALID_REQUEST',
      message: 'agentId "main" does not match the agent of sessionKey "agent:work:main"',
    });
  });
});

describe('memory', () => {
  it('memory.search answers from the memory slot in OpenClaw’s shape', async () => {
    const found: any = await reader.request('memory.search', { query: 'garage code', maxResults: 3 });
    expect(found).toMatchObject({ agentId: 'main', provider: expect.any(String), searchMode: 'fts-only' });
    expect(found.results[0]).toMatchObject({
      path: 'MEMORY.md',
      startLine: expect.any(Number),
      endLine: expect.any(Number),
      score: expect.any(Number),
      snippet: expect.stringContaining('4711'),
    });
    expect(await refusal(reader.request('memory.search', { query: '  ' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'query must be a non-empty string',
    });
    expect(await refusal(reader.request('memory.search', { query: 'x', agentId: 'ghost' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'unknown agentId',
    });
  });

  it('doctor.memory.status reports the backend, keyword-only embeddings and dreaming off; dreamDiary reads DREAMS.md', async () => {
    const status: any = await reader.request('doctor.memory.status', {});
    expect(status).toMatchObject({
      agentId: 'main',
      provider: 'none',
      embedding: { ok: false, checked: false, error: expect.any(String) },
      dreaming: { enabled: false, shortTermCount: 0, promotedTotal: 0, phases: { light: { enabled: false } } },
    });
    const diary: any = await reader.request('doctor.memory.dreamDiary', {});
    expect(diary).toEqual({
      agentId: 'main',
      found: true,
      path: 'DREAMS.md',
      content: 'A diary the workspace keeps.\n',
      updatedAtMs: expect.any(Number),
    });
    expect(await reader.request('doctor.memory.dreamDiary', { agentId: 'work' })).toEqual({
      agentId: 'work',
      found: false,
      path: 'DREAMS.md',
    });
  });

  it('memory import: no providers to plan with; applying is refused', async () => {
    expect(await admin.request('migrations.memory.plan', { agentId: 'work' })).toEqual({
      agentId: 'work',
      workspace: join(gw.stateDir, 'workspace-work'),
      providers: [],
    });
    expect(await refusal(admin.request('migrations.memory.apply', { providerId: 'x', idempotencyKey: 'k' }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw has no memory import providers; copy notes into the workspace’s MEMORY.md or memory/ folder',
    });
    expect((await refusal(reader.request('migrations.memory.plan', {}))).code).toBe('FORBIDDEN');
  });
});

describe('features claw lacks', () => {
  it('tools.github: no identity configured or detected; configuring is refused', async () => {
    expect(await reader.request('tools.github.status', { agentId: 'work', selectedScope: 'agent' })).toEqual({
      agentId: 'work',
      selectedScope: 'agent',
      selected: { scope: 'agent', configured: false, identity: null },
      effective: {
        source: 'system-detected',
        credentialKind: 'native',
        credentialState: 'unavailable',
        account: null,
        gitAuthor: { name: null, email: null },
        evidence: 'none',
        accessExpiresAtMs: null,
        refreshState: 'not_applicable',
        oauthScopes: [],
        repositoryGrants: 'unknown',
      },
    });
    expect((await refusal(admin.request('tools.github.configure', { agentId: 'main', mode: 'inherit' }))).code).toBe(
      'UNAVAILABLE',
    );
  });

  it('plugin.approval.resolve: every id is unknown (approvals scope)', async () => {
    expect(await refusal(admin.request('plugin.approval.resolve', { id: 'p1', decision: 'allow-once' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'unknown or expired approval id',
    });
    expect((await refusal(reader.request('plugin.approval.resolve', { id: 'p1', decision: 'deny' }))).code).toBe(
      'FORBIDDEN',
    );
  });

  it('gateway.restart.request: refused by a gateway not started by `claw gateway`', async () => {
    expect(await refusal(admin.request('gateway.restart.request', { reason: 'test' }))).toEqual({
      code: 'UNAVAILABLE',
      message:
        'this gateway cannot restart itself (it was not started by `claw gateway`); restart the process that runs it',
    });
    expect((await refusal(reader.request('gateway.restart.request', {}))).code).toBe('FORBIDDEN');
  });
});

describe('plugins.changed', () => {
  it('is sent when a plugin is turned off', async () => {
    const changed = nextEvent('plugins.changed');
    await admin.request('plugins.setEnabled', { pluginId: 'example-clock', enabled: false });
    expect((await changed).payload).toEqual({ generation: 1, restartRequired: expect.any(Boolean) });
  });
});

describe('gateway.restart.request under `claw gateway`', () => {
  it('restarts the gateway in place', async () => {
    const stateDir = tempDir('claw-restart-request-');
    const auth = { token: 'restart-request-token-0123456789' };
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ gateway: { auth } }));
    const cli = await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
    const connect = () =>
      new GatewayClient({
        url: `ws://127.0.0.1:${cli.port}`,
        ...auth,
        identity: generateDeviceIdentity(),
        scopes: ['operator.admin', 'operator.read'],
      });
    const operator = connect();
    await operator.connect();
    const answer: any = await operator.request('gateway.restart.request', { reason: 'from the test' });
    expect(answer).toMatchObject({
      ok: true,
      status: 'scheduled',
      preflight: { safe: true, blockers: [], summary: expect.any(String), counts: { totalActive: 0 } },
      restart: { ok: true, pid: cli.child.pid, reason: 'from the test', mode: 'in-process', coalesced: false },
    });
    await waitFor(() => /restarting \(from the test\)[\s\S]*gateway listening/.test(cli.stdout()), {
      what: 'the restart and the gateway listening again',
    });
    const again = connect();
    await again.connect();
    expect(await again.request('health', {})).toMatchObject({ ok: true });
    await again.close();
    await operator.close();
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  }, 60_000);
});
