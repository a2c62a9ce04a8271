/**
 * OpenClaw's live session events claw sends — session.tool, session.approval,
 * session.operation, chat.metadata.changed — each awaited as a frame on a subscribed
 * connection, and the session file methods (sessions.files.list/get/set/reveal,
 * sessions.diff) in OpenClaw's shapes, with their containment: a `../` path and a symlink out
 * of the workspace are refused. A spawned gateway with the fake LLM: a tool-call turn writes
 * the file the methods then find.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import type { EventFrame } from '../sdk/generated/protocol.js';
import { idem, startAgent, type AgentHarness } from './agent-helpers.js';
import { client, connectFrame, rawSocket } from './gateway-helpers.js';
import { tempDir } from './helpers.js';

let h: AgentHarness;
let watcher: GatewayClient;
const frames: EventFrame[] = [];
const listeners = new Set<(frame: EventFrame) => void>();

/** The first frame (already seen or still to come) of that event matching the test. */
function frame(event: string, match: (payload: any) => boolean = () => true): Promise<any> {
  const seen = frames.find((f) => f.event === event && match(f.payload));
  if (seen) return Promise.resolve(seen.payload);
  return new Promise((resolve) => {
    const listener = (f: EventFrame) => {
      if (f.event !== event || !match(f.payload)) return;
      listeners.delete(listener);
      resolve(f.payload);
    };
    listeners.add(listener);
  });
}

async function refusal(request: Promise<unknown>) {
  return request.then(
    () => undefined,
    (error: { code?: string; message?: string; details?: any }) => ({ message: error.message, details: error.details }),
  );
}

beforeAll(async () => {
  h = await startAgent({ config: { tools: { exec: { security: 'allowlist', ask: 'on-miss' } } } });
  watcher = await client(h.gw.url, {
    scopes: ['operator.read', 'operator.approvals'],
    onEvent: (f) => {
      frames.push(f);
      for (const listener of [...listeners]) listener(f);
    },
  });
  // The first calls load the agent and sessions plugins: on a busy machine that is slow.
  await h.client.request('chat.history', { sessionKey: 'main' }, { timeoutMs: 150_000 });
  await watcher.request('sessions.subscribe', {}, { timeoutMs: 150_000 });
  await watcher.request('sessions.messages.subscribe', { key: 'main', includeApprovals: true });
}, 180_000);

afterAll(async () => {
  await watcher?.close();
  await h?.stop();
});

describe('live session events', () => {
  it('session.tool: a run’s tool call start and result reach sessions.subscribe connections', async () => {
    h.fake.script(
      { toolCalls: [{ id: 'call-write', name: 'write', arguments: { path: 'notes/hello.txt', content: 'hello\n' } }] },
      { text: 'written' },
    );
    const started = frame('session.tool', (p) => p.data?.phase === 'start' && p.data?.toolCallId === 'call-write');
    const result = frame('session.tool', (p) => p.data?.phase === 'result' && p.data?.toolCallId === 'call-write');
    await h.client.request(
      'agent',
      { message: 'write a note', sessionKey: 'main', idempotencyKey: idem() },
      {
        expectFinal: true,
        timeoutMs: 30_000,
      },
    );
    expect(await started).toMatchObject({
      runId: expect.any(String),
      sessionKey: 'agent:main:main',
      agentId: 'main',
      seq: expect.any(Number),
      stream: 'tool',
      ts: expect.any(Number),
      data: { phase: 'start', name: 'write', toolCallId: 'call-write', args: { path: 'notes/hello.txt' } },
    });
    expect(await result).toMatchObject({ stream: 'tool', data: { phase: 'result', name: 'write' } });
    expect(readFileSync(join(h.workspace, 'notes/hello.txt'), 'utf8')).toBe('hello\n');
  });

  it('session.approval: an exec approval of the session, pending then terminal, to includeApprovals subscribers', async () => {
    const pending = frame('session.approval', (p) => p.phase === 'pending');
    const running = h.gw.kernel.plugins.kernelServices.tools.invoke({
      name: 'exec',
      params: { command: 'touch approved' },
      toolCallId: 'call-exec',
      context: { agentId: 'main', sessionKey: 'agent:main:main', workspaceDir: tempDir() },
    });
    const asked = await pending;
    expect(asked).toEqual({
      sessionKey: 'agent:main:main',
      updatedAtMs: expect.any(Number),
      phase: 'pending',
      approval: {
        id: expect.any(String),
        status: 'pending',
        presentation: {
          kind: 'exec',
          commandText: 'touch approved',
          commandPreview: null,
          warningText: null,
          host: 'gateway',
          nodeId: null,
          agentId: 'main',
          allowedDecisions: ['allow-once', 'allow-always', 'deny'],
        },
        urlPath: `/approve/${asked.approval.id}`,
        createdAtMs: expect.any(Number),
        expiresAtMs: expect.any(Number),
      },
    });
    const terminal = frame('session.approval', (p) => p.phase === 'terminal' && p.approval.id === asked.approval.id);
    await h.client.request('exec.approval.resolve', { id: asked.approval.id, decision: 'allow-once' });
    expect(await terminal).toMatchObject({
      sessionKey: 'agent:main:main',
      phase: 'terminal',
      approval: {
        id: asked.approval.id,
        status: 'allowed',
        decision: 'allow-once',
        reason: 'user',
        resolvedAtMs: expect.any(Number),
      },
    });
    expect((await running).blocked).toBe(false);
  });

  it('session.operation: sessions.compact announces its start and end', async () => {
    h.fake.script({ text: 'A summary of the note writing.' });
    const start = frame('session.operation', (p) => p.phase === 'start');
    const outcome: any = await h.client.request('sessions.compact', { key: 'main' }, { timeoutMs: 30_000 });
    const started = await start;
    expect(started).toEqual({
      operationId: expect.any(String),
      operation: 'compact',
      phase: 'start',
      sessionKey: 'agent:main:main',
      agentId: 'main',
      ts: expect.any(Number),
    });
    const end = await frame('session.operation', (p) => p.phase === 'end' && p.operationId === started.operationId);
    expect(end).toMatchObject({ operation: 'compact', sessionKey: 'agent:main:main', completed: outcome.compacted });
  });

  it('chat.metadata.changed: a config change tells every client to re-read chat.metadata', async () => {
    const changed = frame('chat.metadata.changed');
    const { hash } = await h.client.request<{ hash: string }>('config.get');
    await h.client.request('config.patch', {
      baseHash: hash,
      raw: JSON.stringify({ messages: { queue: { debounceMs: 25 } } }),
    });
    expect(await changed).toEqual({});
  });
});

describe('models.snapshot', () => {
  it('a Control UI that asks in its connect params gets the configured catalogue right after hello-ok', async () => {
    const socket = await rawSocket(h.gw.url);
    try {
      socket.send(
        connectFrame({
          client: { id: 'openclaw-control-ui', mode: 'webchat' },
          role: 'operator',
          scopes: ['operator.read'],
          caps: ['model-catalog-snapshot'],
          modelCatalog: { agentId: 'main' },
        }),
      );
      const hello = await socket.next((f) => f.type === 'res' && f.id === 'c1', 30_000);
      expect(hello.ok, JSON.stringify(hello.error)).toBe(true);
      expect(hello.payload.features.events).toEqual(
        expect.arrayContaining([
          'models.snapshot',
          'session.tool',
          'session.approval',
          'session.operation',
          'chat.metadata.changed',
        ]),
      );
      const snapshot = await socket.next((f) => f.type === 'event' && f.event === 'models.snapshot', 30_000);
      const listed: any = await h.client.request('models.list', { agentId: 'main', view: 'configured' });
      expect(snapshot.payload).toEqual({ target: { agentId: 'main' }, scope: { agentId: 'main' }, catalog: listed });
      expect(listed.models.map((model: any) => `${model.provider}/${model.id}`)).toContain('openai/gpt-4.1');
    } finally {
      socket.ws.close();
    }
  });

  it('other clients, and a Control UI that did not ask, get none', async () => {
    const socket = await rawSocket(h.gw.url);
    try {
      socket.send(connectFrame({ client: { id: 'openclaw-control-ui', mode: 'webchat' }, scopes: ['operator.read'] }));
      await socket.next((f) => f.type === 'res' && f.id === 'c1', 30_000);
      // A request sent after hello-ok is answered after the snapshot would have been sent.
      socket.send({ type: 'req', id: 'r1', method: 'models.list', params: {} });
      await socket.next((f) => f.type === 'res' && f.id === 'r1', 30_000);
      expect(socket.frames.filter((f) => f.event === 'models.snapshot')).toEqual([]);
    } finally {
      socket.ws.close();
    }
  });
});

describe('session files', () => {
  it('sessions.files.list: the files the tool calls touched, and the workspace browser', async () => {
    const listed: any = await h.client.request('sessions.files.list', { sessionKey: 'main' });
    expect(listed).toMatchObject({ sessionKey: 'main', root: h.workspace, gitCheckout: false });
    expect(listed.files).toEqual([
      {
        path: 'notes/hello.txt',
        name: 'hello.txt',
        kind: 'modified',
        workspacePath: 'notes/hello.txt',
        missing: false,
        size: 6,
        updatedAtMs: expect.any(Number),
      },
    ]);
    expect(listed.browser.path).toBe('');
    expect(listed.browser.entries).toContainEqual({
      path: 'notes',
      name: 'notes',
      kind: 'directory',
      updatedAtMs: expect.any(Number),
      sessionKind: 'modified',
    });
    const inside: any = await h.client.request('sessions.files.list', { sessionKey: 'main', path: 'notes' });
    expect(inside.browser).toMatchObject({ path: 'notes', parentPath: '' });
    expect(inside.browser.entries).toEqual([
      expect.objectContaining({ path: 'notes/hello.txt', kind: 'file', size: 6, sessionKind: 'modified' }),
    ]);
    const found: any = await h.client.request('sessions.files.list', { sessionKey: 'main', search: 'hello' });
    expect(found.browser).toMatchObject({
      path: '',
      search: 'hello',
      entries: [expect.objectContaining({ path: 'notes/hello.txt' })],
    });
    const unknown: any = await h.client.request('sessions.files.list', { sessionKey: 'agent:main:nobody' });
    expect(unknown).toEqual({ sessionKey: 'agent:main:nobody', files: [] });
  });

  it('sessions.files.get and set: a text preview with its hash; a write checks the hash and is atomic', async () => {
    const got: any = await h.client.request('sessions.files.get', { sessionKey: 'main', path: 'notes/hello.txt' });
    expect(got).toEqual({
      sessionKey: 'main',
      root: h.workspace,
      file: {
        path: 'notes/hello.txt',
        name: 'hello.txt',
        kind: 'modified',
        workspacePath: 'notes/hello.txt',
        missing: false,
        size: 6,
        updatedAtMs: expect.any(Number),
        mimeType: 'text/plain',
        contentEncoding: 'utf8',
        previewKind: 'text',
        content: 'hello\n',
        hash: expect.stringMatching(/^[a-f0-9]{64}$/),
      },
    });
    const set: any = await h.client.request('sessions.files.set', {
      sessionKey: 'main',
      path: 'notes/hello.txt',
      content: 'hello again\n',
      expectedHash: got.file.hash,
    });
    expect(set).toMatchObject({
      sessionKey: 'main',
      root: h.workspace,
      file: { path: 'notes/hello.txt', kind: 'modified', missing: false, size: 12, hash: expect.any(String) },
    });
    expect(readFileSync(join(h.workspace, 'notes/hello.txt'), 'utf8')).toBe('hello again\n');
    const stale = await refusal(
      h.client.request('sessions.files.set', {
        sessionKey: 'main',
        path: 'notes/hello.txt',
        content: 'lost update',
        expectedHash: got.file.hash,
      }),
    );
    expect(stale?.message).toContain('session file changed since it was read');
    expect(readFileSync(join(h.workspace, 'notes/hello.txt'), 'utf8')).toBe('hello again\n');
  });

  it('containment: a ../ path and a symlink out of the workspace are refused, for reading and writing', async () => {
    const outside = tempDir();
    writeFileSync(join(outside, 'secret.txt'), 'not yours\n');
    symlinkSync(join(outside, 'secret.txt'), join(h.workspace, 'escape.txt'));
    for (const path of ['../secret.txt', join(outside, 'secret.txt'), 'escape.txt']) {
      const read = await refusal(h.client.request('sessions.files.get', { sessionKey: 'main', path }));
      expect(read?.message).toContain(`session file not found: "${path}" is outside the session's workspace`);
      const hash = 'a'.repeat(64);
      const write = await refusal(
        h.client.request('sessions.files.set', { sessionKey: 'main', path, content: 'x', expectedHash: hash }),
      );
      expect(write?.message).toContain('is outside the session');
    }
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('not yours\n');
    const listed: any = await h.client.request('sessions.files.list', { sessionKey: 'main' });
    expect(listed.browser.entries.map((entry: any) => entry.name)).not.toContain('escape.txt');
  });

  it('sessions.files.reveal: the headless gateway answers OpenClaw’s cannot-open shape with the path', async () => {
    expect(await h.client.request('sessions.files.reveal', { key: 'main' })).toEqual({
      ok: false,
      path: h.workspace,
      error: expect.stringContaining("claw's gateway is headless"),
    });
  });

  it('sessions.diff: not_git outside a checkout; in one, the working tree against HEAD', async () => {
    expect(await h.client.request('sessions.diff', { sessionKey: 'main' })).toEqual({
      sessionKey: 'main',
      files: [],
      additions: 0,
      deletions: 0,
      unavailableReason: 'not_git',
    });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-C', h.workspace, ...args], { stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('add', 'notes/hello.txt');
    git('commit', '-q', '-m', 'note');
    writeFileSync(join(h.workspace, 'notes/hello.txt'), 'hello again\nand more\n');
    mkdirSync(join(h.workspace, 'fresh'), { recursive: true });
    writeFileSync(join(h.workspace, 'fresh/new.txt'), 'one\ntwo\n');
    const diff: any = await h.client.request('sessions.diff', { sessionKey: 'main', scope: 'uncommitted' });
    expect(diff).toMatchObject({ sessionKey: 'main', root: h.workspace, branch: 'main', baseRef: 'HEAD' });
    expect(diff.files).toContainEqual({
      path: 'notes/hello.txt',
      status: 'modified',
      additions: 1,
      deletions: 0,
      patch: expect.stringContaining('+and more'),
    });
    expect(diff.files).toContainEqual({
      path: 'fresh/new.txt',
      status: 'added',
      additions: 2,
      deletions: 0,
      untracked: true,
      patch: expect.stringContaining('+two'),
    });
    expect(diff.additions).toBe(diff.files.reduce((sum: number, file: any) => sum + file.additions, 0));
    const commit: any = await h.client.request('sessions.diff', {
      sessionKey: 'main',
      scope: 'commit',
      commit: 'HEAD',
    });
    expect(commit).toMatchObject({ files: [], additions: 0, deletions: 0, unavailableReason: 'unknown_commit' });
    const bad = await refusal(h.client.request('sessions.diff', { sessionKey: 'main', scope: 'commit' }));
    expect(bad?.message).toContain('commit must be set if and only if scope is commit');
  });
});
