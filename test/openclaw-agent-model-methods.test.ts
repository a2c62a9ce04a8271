/**
 * OpenClaw's group-B methods over claw's agents, auth profiles and sessions, against a real
 * gateway with the agent plugins and a fake LLM on 127.0.0.1: agents.update and agents.delete
 * through the config write path (agents.list takes effect when the gateway restarts, as
 * gateway.reload.mode says, so the file is what they are checked against), the models auth methods over auth-profiles.json (keys never
 * answered, the file owner-only), models.probe with good and bad keys, and the Control UI's
 * session preview card.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { runAgent, startAgent, type AgentHarness } from './agent-helpers.js';
import { client, refusal } from './gateway-helpers.js';
import { tempDir } from './helpers.js';

const GOOD_KEY = 'sk-test';
const NEW_KEY = 'sk-saved-0123456789abcdef';
const AGENTS = [{ id: 'main', default: true }, { id: 'work' }, { id: 'spare' }];
let h: AgentHarness;
let reader: GatewayClient;
let stateDir: string;

beforeAll(async () => {
  stateDir = tempDir('claw-agent-model-methods-');
  // The file the config write path edits holds the same agents as the running config.
  writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ agents: { list: AGENTS } }, null, 2));
  h = await startAgent({
    stateDir,
    fake: { apiKeys: [GOOD_KEY, NEW_KEY] },
    config: { agents: { list: AGENTS } },
  });
  reader = await client(h.gw.url, { scopes: ['operator.read'] });
}, 60_000);

afterAll(async () => {
  await reader?.close();
  await h?.stop();
});

const fileConfig = () => JSON.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8'));
const profilesFile = (agentId: string) => join(stateDir, 'agents', agentId, 'agent', 'auth-profiles.json');

describe('agents.update', () => {
  it('writes name, identity, model and workspace into the agent’s agents.list entry', async () => {
    const workspace = join(stateDir, 'work-space');
    expect(
      await h.client.request('agents.update', {
        agentId: 'work',
        name: 'Work  Bot',
        emoji: '🛠',
        model: 'openai/gpt-4.1-mini',
        workspace,
      }),
    ).toEqual({ ok: true, agentId: 'work' });
    expect(fileConfig().agents.list[1]).toEqual({
      id: 'work',
      name: 'Work Bot',
      workspace,
      model: 'openai/gpt-4.1-mini',
      identity: { name: 'Work Bot', emoji: '🛠' },
    });
    expect(existsSync(workspace)).toBe(true);

    await h.client.request('agents.update', { agentId: 'work', model: null, emoji: '' });
    expect(fileConfig().agents.list[1]).toEqual({
      id: 'work',
      name: 'Work Bot',
      workspace,
      identity: { name: 'Work Bot' },
    });
  });

  it('refuses unknown agents, runtimes claw does not have, bad model refs and read scope', async () => {
    expect(await refusal(h.client.request('agents.update', { agentId: 'ghost', name: 'x' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'agent "ghost" not found',
    });
    expect(
      (await refusal(h.client.request('agents.update', { agentId: 'work', model: 'openai/x', agentRuntime: 'codex' })))
        .code,
    ).toBe('INVALID_REQUEST');
    expect(await refusal(h.client.request('agents.update', { agentId: 'work', model: 'gpt' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'model "gpt" is not a provider/model ref',
    });
    expect((await refusal(reader.request('agents.update', { agentId: 'work', name: 'x' }))).code).toBe('FORBIDDEN');
  });
});

describe('agents.delete', () => {
  it('removes the agent and its bindings and moves its own folders to the trash', async () => {
    const spareWorkspace = join(stateDir, 'workspace-spare');
    mkdirSync(spareWorkspace, { recursive: true });
    writeFileSync(join(spareWorkspace, 'AGENTS.md'), 'spare rules\n');
    const config = fileConfig();
    config.bindings = [
      { agentId: 'spare', match: { channel: 'telegram' } },
      { agentId: 'work', match: { channel: 'discord' } },
    ];
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config, null, 2));

    const deleted: any = await h.client.request('agents.delete', { agentId: 'spare' });
    expect(deleted).toMatchObject({ ok: true, agentId: 'spare', removedBindings: 1 });
    expect(deleted.removed).toContainEqual({ path: spareWorkspace, method: 'trash' });
    expect(deleted.failed).toBeUndefined();
    expect(existsSync(spareWorkspace)).toBe(false);
    expect(fileConfig().agents.list.map((agent: any) => agent.id)).toEqual(['main', 'work']);
    expect(fileConfig().bindings).toEqual([{ agentId: 'work', match: { channel: 'discord' } }]);
  });

  it('keeps the files when asked, and refuses unknown agents and the last one', async () => {
    expect(await refusal(h.client.request('agents.delete', { agentId: 'spare' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'agent "spare" not found',
    });
    const workspace = join(stateDir, 'work-space');
    expect(await h.client.request('agents.delete', { agentId: 'work', deleteFiles: false })).toEqual({
      ok: true,
      agentId: 'work',
      removedBindings: 1,
    });
    expect(existsSync(workspace)).toBe(true);
    expect(fileConfig().agents.list).toEqual([{ id: 'main', default: true }]);
    expect(await refusal(h.client.request('agents.delete', { agentId: 'main' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'Agent "main" is the only configured agent and cannot be deleted.',
    });
  });
});

describe('models auth', () => {
  it('saves an API key as a profile (owner-only file, key never answered), orders and removes profiles', async () => {
    const saved: any = await h.client.request('models.authSetApiKey', { provider: 'openai', apiKey: NEW_KEY });
    expect(saved).toEqual({ provider: 'openai', profileId: 'openai:default' });
    expect(JSON.stringify(saved)).not.toContain(NEW_KEY);
    const file = profilesFile('main');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles['openai:default']).toEqual({
      type: 'api_key',
      provider: 'openai',
      key: NEW_KEY,
    });
    const status: any = await h.client.request('models.authStatus', {});
    expect(JSON.stringify(status)).not.toContain(NEW_KEY);
    expect(status.providers.find((p: any) => p.provider === 'openai').profiles[0].profileId).toBe('openai:default');

    // A second saved profile, written as another tool would: the order covers both.
    const raw = JSON.parse(readFileSync(file, 'utf8'));
    raw.profiles['openai:backup'] = { type: 'api_key', provider: 'openai', key: 'sk-backup' };
    writeFileSync(file, JSON.stringify(raw));
    expect(
      await h.client.request('models.authOrderSet', {
        provider: 'openai',
        profileIds: ['openai:backup', 'openai:default'],
      }),
    ).toEqual({ provider: 'openai', profileIds: ['openai:backup', 'openai:default'] });
    expect(JSON.parse(readFileSync(file, 'utf8')).order).toEqual({ openai: ['openai:backup', 'openai:default'] });
    expect(
      await refusal(h.client.request('models.authOrderSet', { provider: 'openai', profileIds: ['openai:default'] })),
    ).toEqual({
      code: 'INVALID_REQUEST',
      message: 'profileIds must include every available profile for provider openai',
    });
    expect(await h.client.request('models.authOrderSet', { provider: 'openai' })).toEqual({
      provider: 'openai',
      profileIds: null,
    });

    expect(await h.client.request('models.authLogout', { provider: 'openai', profileIds: ['openai:backup'] })).toEqual({
      provider: 'openai',
      removedProfiles: ['openai:backup'],
      abortedRunIds: [],
    });
    expect(
      await refusal(h.client.request('models.authLogout', { provider: 'openai', profileIds: ['openai:nope'] })),
    ).toEqual({ code: 'INVALID_REQUEST', message: 'profileIds contain unavailable auth profiles' });
    expect(await h.client.request('models.authRefresh', { operation: 'update' })).toEqual({ refreshed: true });
    expect((await refusal(reader.request('models.authSetApiKey', { provider: 'openai', apiKey: 'x' }))).code).toBe(
      'FORBIDDEN',
    );
  });

  it('models.probe tests every key of the provider against it; a rejected key reads as auth', async () => {
    const raw = JSON.parse(readFileSync(profilesFile('main'), 'utf8'));
    raw.profiles['openai:bad'] = { type: 'api_key', provider: 'openai', key: 'sk-wrong' };
    writeFileSync(profilesFile('main'), JSON.stringify(raw));
    h.fake.respond(() => ({ text: 'OK' }));
    const probed: any = await h.client.request('models.probe', { provider: 'openai' });
    expect(probed).toMatchObject({ provider: 'openai', status: 'ok', latencyMs: expect.any(Number) });
    const byId = Object.fromEntries(probed.results.map((result: any) => [result.profileId, result]));
    expect(byId['openai:default']).toMatchObject({ label: 'openai:default', status: 'ok' });
    expect(byId['openai:config']).toMatchObject({ status: 'ok' });
    expect(byId['openai:bad']).toMatchObject({ status: 'auth', error: 'The provider rejected the credential.' });
    expect(JSON.stringify(probed)).not.toMatch(/sk-wrong|sk-saved|sk-test/);

    const one: any = await h.client.request('models.probe', { provider: 'openai', profileId: 'openai:bad' });
    expect(one).toEqual({
      provider: 'openai',
      status: 'auth',
      latencyMs: expect.any(Number),
      error: 'The provider rejected the credential.',
      results: [
        {
          profileId: 'openai:bad',
          label: 'openai:bad',
          status: 'auth',
          latencyMs: expect.any(Number),
          error: expect.any(String),
        },
      ],
    });
  });
});

describe('controlUi.sessionPreview', () => {
  it('shows a session’s title and last message, and unavailable for a session that does not exist', async () => {
    h.fake.respond(() => ({ text: 'Hello from the fake model.' }));
    await runAgent(h.client, { message: 'What is the plan for today?', sessionKey: 'agent:main:main' });
    const preview: any = await reader.request('controlUi.sessionPreview', { sessionKey: 'agent:main:main' });
    expect(preview).toMatchObject({
      status: 'ok',
      sessionKey: 'agent:main:main',
      agentId: 'main',
      derivedTitle: 'What is the plan for today?',
      updatedAt: expect.any(Number),
      lastMessagePreview: 'Hello from the fake model.',
      archived: false,
    });
    expect(await reader.request('controlUi.sessionPreview', { sessionKey: 'agent:main:nothing-here' })).toEqual({
      status: 'unavailable',
    });
  });
});
