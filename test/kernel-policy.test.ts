/**
 * The kernel enforces the rules it is handed (KernelPolicy), on every path: these kernels get
 * rules of their own, and each rule shows up where the kernel applies it — the tool choke
 * point, the logger, config issues — with no plugin asking for it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, textResult, type KernelPolicy } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { sandboxStep } from '../host/sandbox-route.js';

const echo = definePlugin({
  id: 'echo-tools',
  register(api) {
    api.registerTool({
      name: 'echo',
      description: 'Echoes',
      parameters: { type: 'object', properties: { text: { type: 'string' } } },
      execute: (params: { text?: string }) => textResult(params.text ?? ''),
    });
    api.registerTool({
      name: 'shell',
      description: 'Runs where it is routed',
      parameters: { type: 'object' },
      runsInSandbox: true,
      execute: () => textResult('ran on the host'),
    });
  },
});

let kernel: TestKernel | undefined;
afterEach(async () => {
  await kernel?.dispose();
  kernel = undefined;
});

const boot = async (policy: Partial<KernelPolicy>, config: Record<string, unknown> = {}) =>
  (kernel = await createTestKernel({ plugins: [echo], policy, config }));

describe('the rules a kernel is handed', () => {
  it('the tool policy decides every call at the choke point', async () => {
    const asked: unknown[] = [];
    await boot({ toolPolicy: (_config, subject) => (asked.push(subject), (name) => name !== 'echo') });
    const refused = await kernel!.runTool('echo', { text: 'hi' }, { agentId: 'main', sessionKey: 'agent:main:main' });
    expect(refused).toMatchObject({
      isError: true,
      content: [{ text: 'Tool "echo" is not allowed by the tool policy for this agent.' }],
    });
    expect(asked).toEqual([{ agentId: 'main', sessionKey: 'agent:main:main' }]);
  });

  it('the redactor masks what tools return and what is logged', async () => {
    const mask = (text: string) => text.replaceAll('hunter2', '<masked>');
    await boot({
      redactor: () => ({
        text: mask,
        value: <T>(value: T) =>
          (typeof value === 'string' ? mask(value) : JSON.parse(mask(JSON.stringify(value)))) as T,
        add() {},
      }),
    });
    expect(await kernel!.runTool('echo', { text: 'the password is hunter2' })).toMatchObject({
      content: [{ text: 'the password is <masked>' }],
    });
    kernel!.logger.warn('leaked hunter2');
    expect(kernel!.logs.map((record) => record.message)).toContain('leaked <masked>');
  });

  it('sandbox routing: a routed call with no backend is refused, never run on the host', async () => {
    await boot({
      sandbox: sandboxStep(() => ({
        reason: 'every call is sandboxed here',
        backend: 'none',
        spec: { workspaceAccess: 'rw', workspaceRoot: '/nowhere' },
      })),
    });
    const result = await kernel!.runTool('shell', {});
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({
      text: expect.stringContaining(
        'needs a sandbox (every call is sandboxed here) but no sandbox backend is configured',
      ),
    });
    expect(JSON.stringify(result)).not.toContain('ran on the host');
  });

  it('config checks beyond the schema, and which unknown keys are only warned about, come from the policy', async () => {
    const forbidden = (config: { agents?: { defaults?: { workspace?: string } } }) =>
      config.agents?.defaults?.workspace === '/forbidden'
        ? [{ path: 'agents.defaults.workspace', message: 'is forbidden here' }]
        : [];
    // An error stops the boot, as a schema error would.
    await expect(
      boot({ configIssues: forbidden }, { agents: { defaults: { workspace: '/forbidden' } } }),
    ).rejects.toThrow('agents.defaults.workspace: is forbidden here');
    await expect(boot({}, { plugins: { bogus: 1 } })).rejects.toThrow('plugins.bogus: is not a known key');
    await boot({ tolerate: (issue) => ({ ...issue, level: 'warning' }) }, { plugins: { bogus: 1 } });
    expect(kernel!.issues()).toContainEqual(expect.objectContaining({ level: 'warning', path: 'plugins.bogus' }));
  });

  it("claw's own policy: OpenClaw's documented keys are warnings, other unknown keys errors", async () => {
    await boot({}, { gateway: { mode: 'local' }, gatway: {} });
    const issues = kernel!.issues().map(({ level, path }) => `${level} ${path}`);
    expect(issues).toContain('warning gateway');
    expect(issues).toContain('error gatway');
  });
});
