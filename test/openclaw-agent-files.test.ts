/**
 * The agent workspace methods OpenClaw's Control UI uses on its Agents tab
 * (agents.files.list/get/set, agents.workspace.get), against a real gateway and workspace:
 * real files in OpenClaw's shapes, hash-guarded writes, and paths that cannot leave the
 * workspace.
 */
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { startAgent, type AgentHarness } from './agent-helpers.js';
import { client } from './gateway-helpers.js';
import { tempDir } from './helpers.js';

let h: AgentHarness;
let reader: GatewayClient;
const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

beforeAll(async () => {
  h = await startAgent();
  reader = await client(h.gw.url, { scopes: ['operator.read'] });
}, 60_000);

afterAll(async () => {
  await reader?.close();
  await h?.stop();
});

async function failure(request: Promise<unknown>): Promise<Record<string, unknown>> {
  return request.then(
    (value) => ({ unexpectedSuccess: value }),
    (error: { code?: string; message?: string; details?: unknown }) => ({
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    }),
  );
}

describe('agents.files.*', () => {
  it('lists the workspace documents with sizes, and the ones not written yet', async () => {
    mkdirSync(h.workspace, { recursive: true });
    writeFileSync(join(h.workspace, 'AGENTS.md'), '# Rules\n');
    rmSync(join(h.workspace, 'BOOTSTRAP.md'), { force: true });
    rmSync(join(h.workspace, 'USER.md'), { force: true });
    const listed: any = await reader.request('agents.files.list', { agentId: 'main' });
    expect(listed.agentId).toBe('main');
    expect(listed.workspace).toBe(h.workspace);
    // Set up (no BOOTSTRAP.md, AGENTS.md there): the first-run ritual is not offered; IDENTITY.md never is.
    expect(listed.files.map((file: any) => file.name)).toEqual(['AGENTS.md', 'SOUL.md', 'USER.md', 'MEMORY.md']);
    const agents = listed.files[0];
    expect(agents).toEqual({
      name: 'AGENTS.md',
      path: join(h.workspace, 'AGENTS.md'),
      missing: false,
      size: 8,
      updatedAtMs: Math.floor(statSync(join(h.workspace, 'AGENTS.md')).mtimeMs),
    });
    expect(listed.files.find((file: any) => file.name === 'USER.md')).toEqual({
      name: 'USER.md',
      path: join(h.workspace, 'USER.md'),
      missing: true,
      expectedAbsent: true,
    });

    writeFileSync(join(h.workspace, 'BOOTSTRAP.md'), 'first run\n');
    const fresh: any = await reader.request('agents.files.list', { agentId: 'main' });
    expect(fresh.files.map((file: any) => file.name)).toContain('BOOTSTRAP.md');
    rmSync(join(h.workspace, 'BOOTSTRAP.md'));
  });

  it('gets a document with its content and hash, or says it is missing', async () => {
    const got: any = await reader.request('agents.files.get', { agentId: 'main', name: 'AGENTS.md' });
    expect(got).toEqual({
      agentId: 'main',
      workspace: h.workspace,
      file: {
        name: 'AGENTS.md',
        path: join(h.workspace, 'AGENTS.md'),
        missing: false,
        size: 8,
        updatedAtMs: expect.any(Number),
        hash: sha('# Rules\n'),
        content: '# Rules\n',
      },
    });
    expect(await reader.request('agents.files.get', { agentId: 'main', name: 'USER.md' })).toEqual({
      agentId: 'main',
      workspace: h.workspace,
      file: { name: 'USER.md', path: join(h.workspace, 'USER.md'), missing: true, expectedAbsent: true },
    });
  });

  it('refuses unknown agents, other file names and hard-linked files', async () => {
    expect(await failure(reader.request('agents.files.list', { agentId: 'ghost' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'agent "ghost" not found',
    });
    expect(await failure(reader.request('agents.files.get', { agentId: 'main', name: '../openclaw.json' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'unsupported file "../openclaw.json"',
    });
    const outside = join(tempDir('claw-agent-files-'), 'secret.txt');
    writeFileSync(outside, 'not for the agent');
    rmSync(join(h.workspace, 'SOUL.md'), { force: true });
    linkSync(outside, join(h.workspace, 'SOUL.md'));
    expect(await failure(reader.request('agents.files.get', { agentId: 'main', name: 'SOUL.md' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'unsafe workspace file "SOUL.md"',
    });
    rmSync(join(h.workspace, 'SOUL.md'));
  });

  it('sets a document (admin only), guarded by the hash the editor read', async () => {
    expect(
      (await failure(reader.request('agents.files.set', { agentId: 'main', name: 'USER.md', content: 'x' }))).code,
    ).toBe('FORBIDDEN');
    const saved: any = await h.client.request('agents.files.set', {
      agentId: 'main',
      name: 'USER.md',
      content: 'Name: Ada\n',
    });
    expect(saved).toEqual({
      ok: true,
      agentId: 'main',
      workspace: h.workspace,
      file: {
        name: 'USER.md',
        path: join(h.workspace, 'USER.md'),
        missing: false,
        size: 10,
        updatedAtMs: expect.any(Number),
        hash: sha('Name: Ada\n'),
        content: 'Name: Ada\n',
      },
    });
    expect(readFileSync(join(h.workspace, 'USER.md'), 'utf8')).toBe('Name: Ada\n');

    // Someone else edited it since the editor read it: the stale write is refused, the file kept.
    writeFileSync(join(h.workspace, 'USER.md'), 'Name: Grace\n');
    expect(
      await failure(
        h.client.request('agents.files.set', {
          agentId: 'main',
          name: 'USER.md',
          content: 'Name: Ada Lovelace\n',
          expectedHash: sha('Name: Ada\n'),
        }),
      ),
    ).toEqual({
      code: 'INVALID_REQUEST',
      message: 'agent file "USER.md" changed since it was read',
      details: { type: 'agent_file_conflict', name: 'USER.md', currentHash: sha('Name: Grace\n') },
    });
    expect(readFileSync(join(h.workspace, 'USER.md'), 'utf8')).toBe('Name: Grace\n');
    await h.client.request('agents.files.set', {
      agentId: 'main',
      name: 'USER.md',
      content: 'Name: Ada Lovelace\n',
      expectedHash: sha('Name: Grace\n').toUpperCase(),
    });
    expect(readFileSync(join(h.workspace, 'USER.md'), 'utf8')).toBe('Name: Ada Lovelace\n');
  });
});

describe('agents.workspace.get', () => {
  it('previews text and images inside the workspace', async () => {
    mkdirSync(join(h.workspace, 'notes'), { recursive: true });
    writeFileSync(join(h.workspace, 'notes', 'todo.txt'), 'buy milk\n');
    expect(await reader.request('agents.workspace.get', { agentId: 'main', path: 'notes/todo.txt' })).toEqual({
      agentId: 'main',
      file: {
        path: 'notes/todo.txt',
        name: 'todo.txt',
        size: 9,
        updatedAtMs: expect.any(Number),
        mimeType: 'text/plain',
        encoding: 'utf8',
        content: 'buy milk\n',
      },
    });
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    writeFileSync(join(h.workspace, 'dot.png'), png);
    expect(await reader.request('agents.workspace.get', { agentId: 'main', path: './dot.png' })).toMatchObject({
      agentId: 'main',
      file: {
        path: 'dot.png',
        name: 'dot.png',
        mimeType: 'image/png',
        encoding: 'base64',
        content: png.toString('base64'),
      },
    });
  });

  it('refuses paths outside the workspace, missing files, binaries and symlinks out', async () => {
    expect(await failure(reader.request('agents.workspace.get', { agentId: 'main', path: '/etc/passwd' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'path must be workspace-relative',
      details: { type: 'workspace_path_invalid', path: '/etc/passwd' },
    });
    expect(
      await failure(reader.request('agents.workspace.get', { agentId: 'main', path: 'notes/../../openclaw.json' })),
    ).toEqual({
      code: 'INVALID_REQUEST',
      message: 'path escapes the agent workspace',
      details: { type: 'workspace_path_invalid', path: 'notes/../../openclaw.json' },
    });
    expect(await failure(reader.request('agents.workspace.get', { agentId: 'main', path: 'nope.txt' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'workspace file not found',
      details: { type: 'workspace_file_not_found', path: 'nope.txt' },
    });
    writeFileSync(join(h.workspace, 'blob.bin'), Buffer.from([0xff, 0xfe, 0x00, 0xc3]));
    expect(await failure(reader.request('agents.workspace.get', { agentId: 'main', path: 'blob.bin' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'workspace file is not UTF-8 text or a supported image',
      details: { type: 'workspace_file_unsupported', path: 'blob.bin' },
    });
    symlinkSync(join(h.gw.stateDir, 'openclaw.json'), join(h.workspace, 'config-link.json'));
    expect(
      (await failure(reader.request('agents.workspace.get', { agentId: 'main', path: 'config-link.json' }))).message,
    ).toBe('workspace file not found');
  });
});
