import { describe, expect, it } from 'vitest';
import { compileToolPolicy } from '../host/tool-policy.js';
import { definePlugin, textResult } from '../sdk/index.js';
import { createTestKernel } from '../sdk/testing.js';

const ALL = [
  'read',
  'write',
  'edit',
  'apply_patch',
  'exec',
  'process',
  'sessions_list',
  'sessions_send',
  'session_status',
  'memory_search',
  'memory_get',
  'image',
  'browser',
  'message',
  'cron',
];
const allowed = (policy: (name: string) => boolean) => ALL.filter(policy);

describe('tool policy', () => {
  it('expands groups and applies profiles', () => {
    expect(allowed(compileToolPolicy({ global: { deny: ['group:runtime'] } }))).not.toContain('exec');
    expect(allowed(compileToolPolicy({ global: { allow: ['group:fs'] } }))).toEqual([
      'read',
      'write',
      'edit',
      'apply_patch',
    ]);
    expect(allowed(compileToolPolicy({ global: { profile: 'minimal' } }))).toEqual(['session_status']);
    const coding = allowed(compileToolPolicy({ global: { profile: 'coding' } }));
    expect(coding).toEqual(expect.arrayContaining(['read', 'exec', 'sessions_list', 'memory_search', 'image']));
    expect(coding).not.toContain('browser');
    expect(coding).not.toContain('message');
    const messaging = allowed(compileToolPolicy({ global: { profile: 'messaging' } }));
    expect(messaging).toEqual(expect.arrayContaining(['message', 'sessions_send']));
    expect(messaging).not.toContain('exec');
    expect(allowed(compileToolPolicy({ global: { profile: 'full' } }))).toEqual(ALL);
    expect(allowed(compileToolPolicy({}))).toEqual(ALL);
  });

  it('matches globs without regard to case; deny wins; layers only narrow', () => {
    expect(allowed(compileToolPolicy({ global: { allow: ['memory_*'] } }))).toEqual(['memory_search', 'memory_get']);
    expect(allowed(compileToolPolicy({ global: { allow: ['READ', 'Exec'] } }))).toEqual(['read', 'exec']);
    expect(allowed(compileToolPolicy({ global: { allow: ['exec'], deny: ['exec'] } }))).toEqual([]);
    expect(allowed(compileToolPolicy({ global: { allow: ['read'] }, agent: { allow: ['read', 'exec'] } }))).toEqual([
      'read',
    ]);
    expect(allowed(compileToolPolicy({ global: { profile: 'coding' }, agent: { deny: ['write'] } }))).not.toContain(
      'write',
    );
  });

  it('applies byProvider layers only for that provider or model', () => {
    const config = { byProvider: { openai: { deny: ['exec'] }, 'anthropic/claude-x': { allow: ['read'] } } };
    expect(allowed(compileToolPolicy({ global: config, provider: 'openai', model: 'openai/gpt-4o' }))).not.toContain(
      'exec',
    );
    expect(
      allowed(compileToolPolicy({ global: config, provider: 'anthropic', model: 'anthropic/claude-y' })),
    ).toContain('exec');
    expect(allowed(compileToolPolicy({ global: config, provider: 'anthropic', model: 'anthropic/claude-x' }))).toEqual([
      'read',
    ]);
    expect(
      allowed(compileToolPolicy({ global: { byProvider: { openai: { profile: 'minimal' } } }, provider: 'openai' })),
    ).toEqual(['session_status']);
  });
});

describe('the tool-call path', () => {
  const events: string[] = [];
  const plugin = definePlugin({
    id: 'toolbox',
    register(api) {
      api.registerTool({
        name: 'add',
        description: 'Adds',
        parameters: {
          type: 'object',
          required: ['a', 'b'],
          properties: { a: { type: 'number' }, b: { type: 'number' }, label: { type: 'string', default: 'sum' } },
          additionalProperties: false,
        },
        execute: (params: { a: number; b: number; label: string }) => {
          events.push(`execute ${JSON.stringify(params)}`);
          return textResult(`${params.label}=${params.a + params.b}`, { sum: params.a + params.b });
        },
      });
      api.registerTool({
        name: 'huge',
        description: 'Too much output',
        parameters: { type: 'object' },
        execute: () => textResult('x'.repeat(300_000)),
      });
      api.registerTool({
        name: 'broken',
        description: 'Throws',
        parameters: { type: 'object' },
        execute: () => {
          throw new Error('disk on fire');
        },
      });
      api.on('before_tool_call', (event) => {
        events.push(`before ${event.toolName}`);
        if (event.toolName === 'add' && event.params.a === 13) return { block: true, blockReason: 'unlucky number' };
        if (event.toolName === 'add' && event.params.a === 1) return { params: { ...event.params, a: 100 } };
        return undefined;
      });
      api.on('tool_result_persist', (event) => {
        events.push(`persist ${event.toolName}`);
        return { message: { ...event.message, persistedBy: 'toolbox' } };
      });
      api.on('after_tool_call', (event) => {
        events.push(`after ${event.toolName}${event.error ? ' (error)' : ''}`);
      });
    },
  });

  it('runs policy → before_tool_call → validate → execute → persist → after, and reports failures as results', async () => {
    const kernel = await createTestKernel({ plugins: [plugin] });
    const call = (name: string, params: Record<string, unknown>, allowedNames?: string[]) =>
      kernel.plugins.kernelServices.tools.invoke({
        name,
        params,
        toolCallId: `c-${name}`,
        context: { agentId: 'main', sessionKey: 'agent:main:main', workspaceDir: '/tmp' },
        allowed: allowedNames ? (tool) => allowedNames.includes(tool) : undefined,
      });

    events.length = 0;
    const ok = await call('add', { a: 1, b: 2 });
    expect(events).toEqual(['before add', 'execute {"a":100,"b":2,"label":"sum"}', 'persist add', 'after add']);
    expect(ok.message).toMatchObject({
      role: 'toolResult',
      toolCallId: 'c-add',
      toolName: 'add',
      isError: false,
      content: [{ type: 'text', text: 'sum=102' }],
      details: { sum: 102 },
      persistedBy: 'toolbox',
    });
    expect(ok.params).toEqual({ a: 100, b: 2, label: 'sum' });

    events.length = 0;
    const blocked = await call('add', { a: 13, b: 1 });
    expect(blocked.blocked).toBe(true);
    expect(blocked.message.content).toEqual([{ type: 'text', text: 'Tool call blocked: unlucky number' }]);
    expect(events).not.toContain(expect.stringMatching(/^execute/));

    const denied = await call('add', { a: 2, b: 2 }, ['read']);
    expect(denied).toMatchObject({
      blocked: true,
      message: { isError: true, content: [{ text: 'Tool "add" is not allowed by the tool policy for this agent.' }] },
    });

    const invalid = await call('add', { a: 'two' });
    expect(invalid.message.content[0]).toEqual({
      type: 'text',
      text: 'Invalid arguments for add: b: is required; a: must be number',
    });
    expect((await call('nope', {})).message.content[0]).toEqual({ type: 'text', text: 'Unknown tool "nope".' });
    expect((await call('broken', {})).message).toMatchObject({
      isError: true,
      content: [{ text: 'Tool broken failed: disk on fire' }],
    });

    const huge = await call('huge', {});
    const text = (huge.message.content[0] as { text: string }).text;
    expect(text.length).toBeLessThan(101_000);
    expect(text).toContain('[… 200000 characters omitted …]');
    await kernel.dispose();
  });
});

describe('secrets in tool results', () => {
  it('masks env values and configured keys in results and errors before the model or transcript sees them', async () => {
    const env = { OPENAI_API_KEY: 'env-openai-key-0123456789', HOME: '/home/ada', LANG: 'en_US.UTF-8' };
    const apiKey = 'cfg-anthropic-key-9876543210';
    const errors: unknown[] = [];
    const printed = Object.entries(env)
      .map(([name, value]) => `${name}=${value}`)
      .join('\n');
    const kernel = await createTestKernel({
      env,
      config: { plugins: { entries: { leaky: { config: { apiKey } } } } },
      plugins: [
        definePlugin({
          id: 'leaky',
          configSchema: { type: 'object', properties: { apiKey: { type: 'string' } } },
          register(api) {
            // What `exec env` prints: every variable of the process.
            api.registerTool({
              name: 'env',
              description: 'Prints env',
              parameters: { type: 'object' },
              execute: () => textResult(`${printed}\nkey in use: ${apiKey}`, { apiKey }),
            });
            api.registerTool({
              name: 'fails',
              description: 'Throws with a key in the message',
              parameters: { type: 'object' },
              execute: () => {
                throw new Error(`401 from https://api.example.com/v1?key=${apiKey}`);
              },
            });
            api.registerTool({
              name: 'picture',
              description: 'An image',
              parameters: { type: 'object' },
              execute: () => ({
                content: [{ type: 'image', data: 'QUtJQUFBQUFBQUFBQUFBQUFBQUE=', mimeType: 'image/png' }],
              }),
            });
            // Hooks see the masked error; one that puts a secret back cannot get it past the choke point.
            api.on('after_tool_call', (event) => {
              if (event.toolName !== 'fails') return undefined;
              errors.push(event.error);
              return { result: textResult(`retry with ${env.OPENAI_API_KEY}`) };
            });
          },
        }),
      ],
    });
    const call = (name: string) =>
      kernel.plugins.kernelServices.tools.invoke({
        name,
        params: {},
        toolCallId: `c-${name}`,
        context: { agentId: 'main', sessionKey: 'agent:main:main', workspaceDir: '/tmp' },
      });

    const listed = await call('env');
    const text = JSON.stringify([listed.message, listed.result]);
    expect(text).not.toContain(env.OPENAI_API_KEY);
    expect(text).not.toContain(apiKey);
    expect((listed.message.content[0] as { text: string }).text).toBe(
      'OPENAI_API_KEY=***\nHOME=/home/ada\nLANG=en_US.UTF-8\nkey in use: ***',
    );
    expect(listed.message.details).toEqual({ apiKey: '***' });

    const failed = await call('fails');
    expect(errors).toEqual(['Tool fails failed: 401 from https://api.example.com/v1?key=***']);
    expect(failed.message).toMatchObject({ isError: false, content: [{ type: 'text', text: 'retry with ***' }] });
    expect(JSON.stringify(failed)).not.toContain(apiKey);

    const picture = await call('picture');
    expect(picture.message.content[0]).toEqual({
      type: 'image',
      data: 'QUtJQUFBQUFBQUFBQUFBQUFBQUE=',
      mimeType: 'image/png',
    });
    await kernel.dispose();
  });
});

describe('sub-agent sessions at the choke point', () => {
  it('narrows by spawn depth whoever makes the call, not only the agent loop', async () => {
    const ran: string[] = [];
    const names = ['cron', 'sessions_send', 'sessions_spawn', 'sessions_list', 'read'];
    const plugin = definePlugin({
      id: 'depth-tools',
      register(api) {
        for (const name of names) {
          api.registerTool({
            name,
            description: name,
            parameters: { type: 'object' },
            execute: () => (ran.push(name), textResult(`${name} ran`)),
          });
        }
      },
    });
    const kernel = await createTestKernel({
      plugins: [plugin],
      config: {
        agents: { defaults: { subagents: { maxSpawnDepth: 2 } } },
        tools: { subagents: { tools: { deny: ['read'] } } },
      },
    });
    try {
      const call = async (name: string, sessionKey: string) => {
        const result = await kernel.runTool(name, {}, { agentId: 'main', sessionKey });
        return result.isError ? 'refused' : 'ran';
      };
      // A main session: everything.
      for (const name of names) expect(await call(name, 'agent:main:main'), name).toBe('ran');
      // Depth 1 of 2: may still spawn and list, never cron/send; tools.subagents.tools applies.
      const child = 'agent:main:subagent:a1';
      expect(await call('sessions_spawn', child)).toBe('ran');
      expect(await call('sessions_list', child)).toBe('ran');
      expect(await call('cron', child)).toBe('refused');
      expect(await call('sessions_send', child)).toBe('refused');
      expect(await call('read', child)).toBe('refused');
      // Depth 2 of 2 is a leaf: no session tools at all.
      const leaf = `${child}:subagent:b2`;
      expect(await call('sessions_spawn', leaf)).toBe('refused');
      expect(await call('sessions_list', leaf)).toBe('refused');
      expect(ran.filter((name) => name === 'cron')).toHaveLength(1);
    } finally {
      await kernel.dispose();
    }
  });
});
