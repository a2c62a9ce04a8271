/**
 * `tools.catalog` and `commands.list` in OpenClaw's shapes (its Control UI's tools panel and
 * command palette read them): every registered tool with its source and profiles, every
 * slash command with its aliases.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, textResult } from '../sdk/index.js';
import { startAgent, type AgentHarness } from './agent-helpers.js';

const acme = definePlugin({
  id: 'acme',
  register(api) {
    api.registerTool({
      name: 'acme_lookup',
      description: 'Looks up an order. Returns its status.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      execute: async () => textResult('ok'),
    });
    api.registerCommand({
      name: 'deploy',
      description: 'deploy the site',
      acceptsArgs: true,
      handler: () => ({ text: 'deployed' }),
    });
  },
});

type Catalog = {
  agentId: string;
  profiles: Array<{ id: string }>;
  groups: Array<{
    id: string;
    source: string;
    pluginId?: string;
    tools: Array<{ id: string; description: string; source: string; pluginId?: string; defaultProfiles: string[] }>;
  }>;
};
type Commands = {
  commands: Array<{ name: string; textAliases: string[]; source: string; acceptsArgs: boolean; description: string }>;
};

describe('operator helper methods', () => {
  let h: AgentHarness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('tools.catalog groups core and plugin tools with their profiles; commands.list lists built-in and plugin commands with their aliases', async () => {
    h = await startAgent({ plugins: [acme] });
    const catalog = await h.client.request<Catalog>('tools.catalog', {});
    expect(catalog.agentId).toBe('main');
    expect(catalog.profiles.map((profile) => profile.id)).toEqual(['minimal', 'coding', 'messaging', 'full']);
    const tools = catalog.groups.flatMap((group) => group.tools.map((tool) => ({ ...tool, group: group.id })));
    const read = tools.find((tool) => tool.id === 'read')!;
    expect(read).toMatchObject({ source: 'core', group: 'group:fs', defaultProfiles: ['coding', 'full'] });
    expect(read.description.length).toBeGreaterThan(0);
    expect(tools.find((tool) => tool.id === 'exec')).toMatchObject({ source: 'core', group: 'group:runtime' });
    expect(tools.find((tool) => tool.id === 'acme_lookup')).toMatchObject({
      source: 'plugin',
      pluginId: 'acme',
      group: 'plugin:acme',
      description: 'Looks up an order.',
      defaultProfiles: ['full'],
    });
    // Core groups come first.
    expect(catalog.groups.findIndex((group) => group.source === 'plugin')).toBeGreaterThan(
      catalog.groups.findIndex((group) => group.source === 'core'),
    );
    const coreOnly = await h.client.request<Catalog>('tools.catalog', { includePlugins: false });
    expect(coreOnly.groups.some((group) => group.source === 'plugin')).toBe(false);
    await expect(h.client.request('tools.catalog', { agentId: 'ghost' })).rejects.toThrow(/ghost/);

    const { commands } = await h.client.request<Commands>('commands.list', { scope: 'both', includeArgs: true });
    const byName = new Map(commands.map((command) => [command.name, command]));
    expect(byName.get('help')).toMatchObject({ source: 'native', textAliases: ['/help'], acceptsArgs: false });
    expect(byName.get('new')).toMatchObject({ source: 'native', textAliases: ['/new', '/reset'], acceptsArgs: true });
    expect(byName.get('model')).toMatchObject({ source: 'native', acceptsArgs: true });
    expect(byName.get('deploy')).toMatchObject({
      source: 'plugin',
      textAliases: ['/deploy'],
      acceptsArgs: true,
      description: 'deploy the site',
    });
    await expect(h.client.request('commands.list', { agentId: 'ghost' })).rejects.toThrow(/ghost/);
  });
});
