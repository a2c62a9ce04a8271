/**
 * Issue 12, part 2, beyond the escape table: the defaults (tools.fs.workspaceOnly off as in
 * OpenClaw, apply_patch contained), links that stay inside, `~`, and a symlink swapped back and
 * forth while the tools run (the check-then-use race).
 */
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open } from 'node:fs/promises';
import { checkDescriptor, PathRefused, recheckDirectory } from '../sdk/index.js';
import type { ToolResult } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { REPO, tempDir } from './helpers.js';

const PLUGIN = join(REPO, 'plugins', 'tools-fs');
const text = (result: ToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

function layout(): { root: string; ws: string; outside: string } {
  const root = tempDir('claw-contain-');
  const ws = join(root, 'ws');
  const outside = join(root, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'OUTSIDE');
  return { root, ws, outside };
}

describe('defaults', () => {
  let kernel: TestKernel;
  beforeAll(async () => {
    kernel = await createTestKernel({ plugins: [PLUGIN] });
  });
  afterAll(() => kernel.dispose());

  it('read, write, edit and apply_patch stay in the workspace by default (claw turns tools.fs.workspaceOnly on; OpenClaw leaves it off)', async () => {
    const { ws, outside } = layout();
    const read = await kernel.runTool('read', { path: '../outside/secret.txt' }, { workspaceDir: ws });
    expect(read.isError).toBe(true);
    expect(text(read)).toContain('tools.fs.workspaceOnly is on');
    expect(text(read)).not.toContain('OUTSIDE');
    const patched = await kernel.runTool(
      'apply_patch',
      { input: '*** Begin Patch\n*** Add File: ../outside/p.txt\n+x\n*** End Patch' },
      { workspaceDir: ws },
    );
    expect(patched.isError).toBe(true);
    expect(existsSync(join(outside, 'p.txt'))).toBe(false);
  });

  it('tools.fs.workspaceOnly false lets read, write and edit leave the workspace; apply_patch keeps its own setting', async () => {
    const open = await createTestKernel({ plugins: [PLUGIN], config: { tools: { fs: { workspaceOnly: false } } } });
    try {
      const { ws, outside } = layout();
      expect(text(await open.runTool('read', { path: '../outside/secret.txt' }, { workspaceDir: ws }))).toBe('OUTSIDE');
      const patched = await open.runTool(
        'apply_patch',
        { input: '*** Begin Patch\n*** Add File: ../outside/p.txt\n+x\n*** End Patch' },
        { workspaceDir: ws },
      );
      expect(patched.isError).toBe(true);
      expect(text(patched)).toContain('tools.exec.applyPatch.workspaceOnly is on');
      expect(existsSync(join(outside, 'p.txt'))).toBe(false);
    } finally {
      await open.dispose();
    }
  });
});

describe('tools.fs.workspaceOnly', () => {
  let kernel: TestKernel;
  beforeAll(async () => {
    kernel = await createTestKernel({ plugins: [PLUGIN], config: { tools: { fs: { workspaceOnly: true } } } });
  });
  afterAll(() => kernel.dispose());

  it('follows links that stay inside, and works when the workspace path itself is a symlink', async () => {
    const { root, ws } = layout();
    mkdirSync(join(ws, 'real'));
    writeFileSync(join(ws, 'real', 'a.txt'), 'inside a\n');
    symlinkSync(join(ws, 'real'), join(ws, 'alias'));
    symlinkSync(ws, join(root, 'ws-link'));
    expect(text(await kernel.runTool('read', { path: 'alias/a.txt' }, { workspaceDir: ws }))).toBe('inside a');
    expect(text(await kernel.runTool('read', { path: 'real/a.txt' }, { workspaceDir: join(root, 'ws-link') }))).toBe(
      'inside a',
    );
    expect(
      (await kernel.runTool('write', { path: 'alias/b.txt', content: 'b' }, { workspaceDir: ws })).isError,
    ).toBeUndefined();
    expect(readFileSync(join(ws, 'real', 'b.txt'), 'utf8')).toBe('b');
    // A workspace that does not exist yet, under a symlinked parent: judged by where it will be.
    const fresh = join(root, 'ws-link', 'new-ws');
    expect(
      (await kernel.runTool('write', { path: 'c.txt', content: 'c' }, { workspaceDir: fresh })).isError,
    ).toBeUndefined();
    expect(readFileSync(join(ws, 'new-ws', 'c.txt'), 'utf8')).toBe('c');
  });

  it('refuses ~ paths, and apply_patch deleting a link removes the link, not its target', async () => {
    const { ws, outside } = layout();
    const home = await kernel.runTool('read', { path: '~/.profile' }, { workspaceDir: ws });
    expect(text(home)).toMatch(/^Refused: ~\/\.profile resolves to .*, outside the workspace/);
    symlinkSync(join(outside, 'secret.txt'), join(ws, 'to-outside'));
    const removed = await kernel.runTool(
      'apply_patch',
      { input: '*** Begin Patch\n*** Delete File: to-outside\n*** End Patch' },
      { workspaceDir: ws },
    );
    expect(removed.isError).toBeUndefined();
    expect(existsSync(join(ws, 'to-outside'))).toBe(false);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE');
  });

  it("what was opened is checked again, and a staged write's directory before its rename", async () => {
    const { ws, outside } = layout();
    const containment = { workspace: ws, setting: 'tools.fs.workspaceOnly' };
    // As if the path check passed and a parent was swapped for a link to outside before the open.
    const handle = await open(join(outside, 'secret.txt'), 'r');
    try {
      await expect(checkDescriptor(handle, join(ws, 'secret.txt'), 'secret.txt', containment)).rejects.toThrow(
        PathRefused,
      );
      await expect(checkDescriptor(handle, join(ws, 'secret.txt'), 'secret.txt', containment)).rejects.toThrow(
        /resolves to .*outside\/secret\.txt, outside the workspace/,
      );
    } finally {
      await handle.close();
    }
    await expect(recheckDirectory(outside, 'x/new.txt', containment)).rejects.toThrow(PathRefused);
    await expect(recheckDirectory(ws, 'new.txt', containment)).resolves.toBeUndefined();
  });

  // Probabilistic: the windows between check and use are microseconds, so this mostly shows
  // that nothing leaks while both sides of the flip are hit; the test above pins the re-checks.
  it('a symlink flipped between inside and outside while the tools run never lets one through', async () => {
    const { ws, outside } = layout();
    mkdirSync(join(ws, 'inner'));
    writeFileSync(join(ws, 'inner', 'secret.txt'), 'INSIDE');
    symlinkSync(join(ws, 'inner'), join(ws, 'flip'));
    // Atomic swaps of ws/flip (rename over it), as fast as the shell goes.
    const flipper = spawn(
      '/bin/sh',
      [
        '-c',
        `while :; do ln -sfn ${outside} ${ws}/.next && mv -T ${ws}/.next ${ws}/flip; ln -sfn ${ws}/inner ${ws}/.next && mv -T ${ws}/.next ${ws}/flip; done`,
      ],
      { stdio: 'ignore' },
    );
    try {
      const seen = { inside: 0, refused: 0, other: 0 };
      for (let i = 0; i < 150; i++) {
        const read = text(await kernel.runTool('read', { path: 'flip/secret.txt' }, { workspaceDir: ws }));
        expect(read).not.toContain('OUTSIDE');
        if (read === 'INSIDE') seen.inside++;
        else if (read.startsWith('Refused')) seen.refused++;
        else seen.other++;
        await kernel.runTool('write', { path: `flip/w${i}.txt`, content: 'x' }, { workspaceDir: ws });
        await kernel.runTool(
          'apply_patch',
          { input: `*** Begin Patch\n*** Add File: flip/p${i}.txt\n+x\n*** End Patch` },
          { workspaceDir: ws },
        );
      }
      const leaked = Array.from({ length: 150 }, (_, i) => [`w${i}.txt`, `p${i}.txt`])
        .flat()
        .filter((name) => existsSync(join(outside, name)));
      expect(leaked).toEqual([]);
      // Both sides of the flip were hit, so the race was real.
      expect(seen.inside).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
    } finally {
      if (flipper.pid) process.kill(flipper.pid, 'SIGKILL');
    }
    expect(lstatSync(join(ws, 'flip')).isSymbolicLink()).toBe(true);
  }, 60_000);
});
