/**
 * mcp-call: an MCP tool call through the kernel's tool choke point (policy, hooks, params
 * check, approval step, masking) against the real server-everything over stdio, p50/p95,
 * beside the same call made straight on an MCP client: the difference is claw's overhead.
 * mcp-cold: a stdio server from spawn to its tool list (initialize + tools/list), first
 * (which also loads the MCP SDK) and p50 of fresh starts.
 */
import { fileURLToPath } from 'node:url';
import { bundledPluginDir, createTestKernel, type TestKernel } from '../../sdk/testing.js';
import { connectServer } from '../../plugins/mcp/connect.js';
import { resolveServer } from '../../plugins/mcp/config.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;

const EVERYTHING = fileURLToPath(
  new URL(
    '../../../.cache/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js',
    import.meta.url,
  ),
);
const SERVER = {
  command: process.execPath,
  args: [EVERYTHING, 'stdio'],
  codex: { defaultToolsApprovalMode: 'auto' as const },
};

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const ms = (value: number) => `${value.toFixed(2)} ms`;

async function mcpKernel(): Promise<TestKernel> {
  const kernel = await createTestKernel({
    plugins: [bundledPluginDir('mcp'), bundledPluginDir('exec-approvals'), bundledPluginDir('tools-exec')],
    config: { mcp: { servers: { everything: SERVER } } },
    env: process.env,
  });
  await kernel.start();
  return kernel;
}

export async function mcpCallBench(line: Line, quick: boolean): Promise<void> {
  const kernel = await mcpKernel();
  const calls = quick ? 200 : 1000;
  try {
    await kernel.hooks.runModifying('before_agent_start', { prompt: 'x' }, { agentId: 'main' });
    const params = { message: 'benchmark' };
    const direct = await connectServer(resolveServer('everything', SERVER), { kernel: kernel.plugins.kernelServices });
    // Interleaved, so a busy machine slows both sides alike.
    const through: number[] = [];
    const straight: number[] = [];
    try {
      for (let i = 0; i < calls + 20; i++) {
        let started = performance.now();
        const result = await kernel.runTool('everything__echo', params, { agentId: 'main' });
        if (result.isError) throw new Error(`everything__echo failed: ${JSON.stringify(result.content)}`);
        if (i >= 20) through.push(performance.now() - started);
        started = performance.now();
        await direct.client.callTool({ name: 'echo', arguments: params });
        if (i >= 20) straight.push(performance.now() - started);
      }
    } finally {
      await direct.close();
    }
    const [p50, p95, base] = [percentile(through, 0.5), percentile(through, 0.95), percentile(straight, 0.5)];
    line(
      `MCP tool call through the choke point (echo, stdio), p50 / p95 over ${calls}`,
      `${ms(p50)} / ${ms(p95)}`,
      '(info)',
      true,
    );
    line('  the same call straight on an MCP client, p50', ms(base), '(info)', true);
    line('  claw overhead per call, p50', ms(p50 - base), '≤ 1 ms', p50 - base <= 1);
  } finally {
    await kernel.dispose();
  }
}

export async function mcpColdBench(line: Line, quick: boolean): Promise<void> {
  const kernel = await mcpKernel();
  try {
    const starts: number[] = [];
    for (let i = 0; i < (quick ? 4 : 11); i++) {
      const started = performance.now();
      const connection = await connectServer(resolveServer('everything', SERVER), {
        kernel: kernel.plugins.kernelServices,
      });
      if (connection.tools.length === 0) throw new Error('server-everything listed no tools');
      starts.push(Math.round(performance.now() - started));
      await connection.close();
    }
    line('stdio MCP server cold start to its tool list, first (loads the MCP SDK)', `${starts[0]} ms`, '(info)', true);
    line(`  p50 of ${starts.length - 1} fresh starts after`, `${percentile(starts.slice(1), 0.5)} ms`, '(info)', true);
  } finally {
    await kernel.dispose();
  }
}
