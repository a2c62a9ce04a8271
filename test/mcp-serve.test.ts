/**
 * `claw mcp serve` end to end: the MCP SDK's own client spawns the built CLI over stdio,
 * against a real gateway whose agent talks to the scripted fake model and whose channel is
 * an in-memory chat service. Conversations, history, a reply through the stored route,
 * live events, Claude channel notifications and exec approvals all cross the real wire.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { InboundMessage } from '../sdk/channels/index.js';
import { definePlugin } from '../sdk/index.js';
import { agentStackDirs } from '../sdk/testing.js';
import { startAgent, type AgentHarness } from './agent-helpers.js';
import { startGateway, TEST_TOKEN, type RunningGateway } from './gateway-helpers.js';
import { CLI, freePort, tempDir, waitFor } from './helpers.js';

const OWNER = 'owner-1';
const CHAT = 'chat-1';

/** A chat service in memory: the test posts as the user, the bot's sends land in `outbox`. */
const outbox: Array<{ to: string; text: string }> = [];
let post: ((text: string) => Promise<void>) | undefined;
let posted = 0;
const memoryChat = definePlugin({
  id: 'memory-chat',
  register(api) {
    api.registerChannel({
      id: 'memory-chat',
      label: 'Memory chat',
      textLimit: 2000,
      async start(ctx) {
        post = async (text) => {
          const inbound: InboundMessage = {
            accountId: ctx.accountId,
            peer: { kind: 'direct', id: CHAT },
            sender: { id: OWNER, name: 'Owner' },
            text,
            messageId: `in-${++posted}`,
            mentioned: false,
          };
          await ctx.receive(inbound);
        };
        ctx.signal.addEventListener('abort', () => (post = undefined));
      },
      async send(message) {
        outbox.push({ to: message.to, text: message.text ?? '' });
        return { messageId: `out-${outbox.length}` };
      },
      status: () => [{ accountId: 'default', connected: post !== undefined }],
    });
  },
});

type Structured = Record<string, any>;

let agent: AgentHarness;
let mcp: Client;
let stderr = '';
const notifications: Array<{ method: string; params?: Record<string, any> }> = [];

async function call(name: string, args: Record<string, unknown> = {}): Promise<Structured> {
  const result = (await mcp.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as Structured;
  if (result.isError) throw new Error(`${name}: ${result.content?.[0]?.text}`);
  return result.structuredContent as Structured;
}

/** The next queued event of `type` after `cursor` (events_wait until it comes). */
async function nextEvent(type: string, cursor: number, sessionKey?: string): Promise<Structured> {
  for (;;) {
    const { event } = await call('events_wait', {
      after_cursor: cursor,
      timeout_ms: 20_000,
      ...(sessionKey ? { session_key: sessionKey } : {}),
    });
    if (!event) throw new Error(`no ${type} event after cursor ${cursor}`);
    if (event.type === type) return event;
    cursor = event.cursor;
  }
}

async function say(text: string): Promise<void> {
  await waitFor(() => post, { what: 'the memory-chat account' });
  await post!(text);
}

beforeAll(async () => {
  agent = await startAgent({
    plugins: [memoryChat],
    config: {
      channels: { 'memory-chat': { dmPolicy: 'allowlist', allowFrom: [OWNER] } },
      tools: { exec: { security: 'allowlist', ask: 'on-miss' } },
    },
  });
  agent.fake.script({ text: 'Hi owner, how can I help?' });
  await say('hello claw');
  // Generous: the first turn also loads the agent stack, on a machine shared with other suites.
  await waitFor(() => outbox.some((sent) => sent.text.includes('Hi owner')), {
    what: 'the first reply',
    timeoutMs: 60_000,
  });

  const tokenFile = join(tempDir(), 'gateway.token');
  writeFileSync(tokenFile, `${TEST_TOKEN}\n`, { mode: 0o600 });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', 'serve', '--url', agent.gw.url, '--token-file', tokenFile],
    env: { ...(process.env as Record<string, string>), OPENCLAW_STATE_DIR: tempDir('claw-mcp-serve-') },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  mcp = new Client({ name: 'claw-test', version: '1.0.0' });
  mcp.fallbackNotificationHandler = async (notification) => void notifications.push(notification as never);
  await mcp.connect(transport);
}, 180_000);

afterAll(async () => {
  await mcp?.close();
  await agent?.stop();
});

// Each test waits on a model turn; the machine may be shared with other suites.
describe('claw mcp serve', { timeout: 60_000 }, () => {
  it("offers OpenClaw's bridge tools and Claude's channel capabilities", async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      [
        'attachments_fetch',
        'conversation_get',
        'conversations_list',
        'events_poll',
        'events_wait',
        'messages_read',
        'messages_send',
        'permissions_list_open',
        'permissions_respond',
      ].sort(),
    );
    expect(mcp.getServerCapabilities()?.experimental).toEqual({
      'claude/channel': {},
      'claude/channel/permission': {},
    });
    expect(mcp.getServerVersion()?.name).toBe('claw');
  });

  it('lists the routed session as a conversation and reads its history', async () => {
    const { conversations } = await call('conversations_list');
    expect(conversations).toEqual([
      expect.objectContaining({
        channel: 'memory-chat',
        to: CHAT,
        derivedTitle: expect.stringContaining('hello claw'),
      }),
    ]);
    const sessionKey = conversations[0].sessionKey as string;
    expect((await call('conversation_get', { session_key: sessionKey })).conversation).toEqual(conversations[0]);
    expect(await call('conversations_list', { channel: 'telegram' })).toEqual({ conversations: [] });

    const { messages } = await call('messages_read', { session_key: sessionKey });
    const texts = messages.map((message: Structured) => JSON.stringify(message.content));
    expect(texts.some((text: string) => text.includes('hello claw'))).toBe(true);
    expect(texts.some((text: string) => text.includes('Hi owner'))).toBe(true);
    const reply = messages.find((message: Structured) => message.role === 'assistant');
    const fetched = await call('attachments_fetch', {
      session_key: sessionKey,
      message_id: String(reply.__openclaw.seq),
    });
    expect(fetched).toEqual({ attachments: [], message: reply });

    const missing = (await mcp.callTool({
      name: 'conversation_get',
      arguments: { session_key: 'agent:main:nope' },
    })) as Structured;
    expect(missing.isError).toBe(true);
    expect(missing.content[0].text).toBe('conversation not found: agent:main:nope');
    const bad = (await mcp.callTool({
      name: 'messages_read',
      arguments: { session_key: sessionKey, limit: 500 },
    })) as Structured;
    expect(bad.isError).toBe(true);
    expect(bad.content[0].text).toBe('messages_read: limit must be ≤ 200');
  });

  it('sends through the stored route, then the live queue and Claude notifications carry the answer', async () => {
    const [conversation] = (await call('conversations_list')).conversations;
    const sent = await call('messages_send', { session_key: conversation.sessionKey, text: 'Are you still there?' });
    expect(sent.result).toMatchObject({ ok: true, channel: 'memory-chat', to: CHAT });
    expect(outbox.at(-1)).toEqual({ to: CHAT, text: 'Are you still there?' });

    const { next_cursor: start } = await call('events_poll');
    agent.fake.script({ text: 'It is noon.' });
    const waiting = nextEvent('message', start, conversation.sessionKey);
    await say('yes, what time is it?');
    const userEvent = await waiting;
    expect(userEvent).toMatchObject({
      type: 'message',
      role: 'user',
      sessionKey: conversation.sessionKey,
      conversation: expect.objectContaining({ channel: 'memory-chat', to: CHAT }),
    });
    expect(userEvent.text).toContain('yes, what time is it?');
    const answer = await nextEvent('message', userEvent.cursor, conversation.sessionKey);
    expect(answer).toMatchObject({ role: 'assistant', text: 'It is noon.' });
    // Nothing from before the bridge connected is replayed.
    const { events } = await call('events_poll', { after_cursor: 0, limit: 200 });
    expect(events.some((event: Structured) => String(event.text).includes('hello claw'))).toBe(false);

    const pushed = await waitFor(() => notifications.find((item) => item.method === 'notifications/claude/channel'), {
      what: 'the Claude channel notification',
    });
    expect(pushed.params).toMatchObject({
      content: expect.stringContaining('yes, what time is it?'),
      meta: { session_key: conversation.sessionKey, channel: 'memory-chat', to: CHAT },
    });
  });

  it('answers a Claude permission prompt from the direct chat', async () => {
    const { next_cursor: start } = await call('events_poll', { limit: 200 });
    await mcp.notification({
      method: 'notifications/claude/channel/permission_request' as never,
      params: { request_id: 'abcde', tool_name: 'Bash', description: 'run ls', input_preview: 'ls' } as never,
    });
    expect(await nextEvent('claude_permission_request', start)).toMatchObject({ requestId: 'abcde', toolName: 'Bash' });
    agent.fake.script({ text: 'Noted.' });
    await say('yes abcde');
    const verdict = await waitFor(
      () => notifications.find((item) => item.method === 'notifications/claude/channel/permission'),
      { what: 'the permission verdict', timeoutMs: 20_000 },
    );
    expect(verdict.params).toEqual({ request_id: 'abcde', behavior: 'allow' });
  });

  it('lists an exec approval the agent waits on and resolves it', async () => {
    const { next_cursor: start } = await call('events_poll', { limit: 200 });
    const marker = join(agent.workspace, 'approved-by-mcp');
    agent.fake.script(
      { toolCalls: [{ name: 'exec', arguments: { command: `touch ${marker}` } }] },
      { text: 'Touched it.' },
    );
    await say('please touch the file');
    const requested = await nextEvent('exec_approval_requested', start);
    const { approvals } = await call('permissions_list_open');
    expect(approvals).toEqual([
      expect.objectContaining({
        kind: 'exec',
        id: requested.raw.id,
        request: expect.objectContaining({ command: `touch ${marker}` }),
      }),
    ]);
    expect(existsSync(marker)).toBe(false);
    await call('permissions_respond', { kind: 'exec', id: requested.raw.id, decision: 'allow-once' });
    await nextEvent('exec_approval_resolved', requested.cursor);
    expect((await call('permissions_list_open')).approvals).toEqual([]);
    await waitFor(() => outbox.some((sent) => sent.text === 'Touched it.'), {
      what: 'the reply after approval',
      timeoutMs: 30_000,
    });
    expect(existsSync(marker)).toBe(true);
    expect(stderr).toBe('');
  });
});

describe('claw mcp serve as a process', () => {
  function serve(args: string[], input?: string) {
    const child = spawn(process.execPath, [CLI, 'mcp', 'serve', ...args], {
      env: { ...process.env, OPENCLAW_STATE_DIR: tempDir('claw-mcp-serve-') },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    if (input !== undefined) child.stdin.end(input);
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.on('close', (code) => resolve({ code, stdout: out, stderr: err })),
    );
  }

  it('refuses a wrong token on stderr with a nonzero exit, printing nothing on stdout', async () => {
    const result = await serve(['--url', agent.gw.url, '--token', 'wrong-token-0123456789']);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/token|auth|unauthorized/i);
    expect(result.stderr).not.toContain('wrong-token-0123456789');
  });

  it('exits cleanly when its client closes stdin', async () => {
    const result = await serve(['--url', agent.gw.url, '--token', TEST_TOKEN], '');
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('names bad flags', async () => {
    const mode = await serve(['--claude-channel-mode', 'sometimes']);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain('--claude-channel-mode must be on, off or auto, got "sometimes"');
    const file = await serve(['--token-file', join(tempDir(), 'missing')]);
    expect(file.code).toBe(2);
    expect(file.stderr).toMatch(/--token-file: cannot read .*missing \(ENOENT\)/);
  });
});

describe('claw mcp serve across a gateway restart', () => {
  it('keeps the MCP session, says it is reconnecting, and answers again once the gateway is back', async () => {
    const port = await freePort();
    const stateDir = tempDir('claw-mcp-gw-');
    const boot = () => startGateway({ gateway: { port }, stateDir, plugins: agentStackDirs() });
    let gw: RunningGateway | undefined = await boot();
    let log = '';
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', 'serve', '--url', `ws://127.0.0.1:${port}`, '--token', TEST_TOKEN, '--verbose'],
      env: { ...(process.env as Record<string, string>), OPENCLAW_STATE_DIR: tempDir('claw-mcp-serve-') },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const client = new Client({ name: 'claw-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      const list = () => client.callTool({ name: 'conversations_list', arguments: {} }) as Promise<Structured>;
      expect((await list()).structuredContent).toEqual({ conversations: [] });
      expect(log).toContain(`connected to ws://127.0.0.1:${port}`);

      await gw.stop();
      gw = undefined;
      await waitFor(() => log.includes('the gateway connection was lost; reconnecting'), { what: 'the lost line' });
      const offline = await list();
      expect(offline.isError).toBe(true);
      expect(offline.content[0].text).toBe('conversations_list failed: not connected to the gateway (reconnecting)');

      gw = await boot();
      await waitFor(() => log.split('connected to ws://').length === 3, { what: 'the reconnect', timeoutMs: 20_000 });
      expect((await list()).structuredContent).toEqual({ conversations: [] });
    } finally {
      await client.close();
      await gw?.stop();
    }
  }, 60_000);
});
