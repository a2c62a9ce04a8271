/**
 * The node host's file-transfer commands called directly, as its dispatcher calls them:
 * OpenClaw's params and payloads, only inside nodeHost.fileTransfer.roots, with `..`,
 * symlinks leading out and links at the end of a path refused, 16 MiB and sha256 checks,
 * and writes that never leave half a file or replace one unasked.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { extraNodeCommands, type NodeCommandContext } from '../plugins/node-host/extra-commands.js';
import { dirList, fileFetch, fileStat, fileWrite, TRANSFER_MAX_BYTES } from '../plugins/node-host/file-transfer.js';
import { tempDir } from './helpers.js';

function setup() {
  const base = realpathSync(tempDir('claw-ft-'));
  const root = join(base, 'share');
  const outside = join(base, 'outside');
  mkdirSync(join(root, 'docs'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'docs', 'a.txt'), 'hello\n');
  writeFileSync(join(root, 'b.bin'), Buffer.from([0, 1, 2, 3]));
  writeFileSync(join(outside, 'secret.txt'), 'secret');
  const ctx: NodeCommandContext = {
    signal: new AbortController().signal,
    stateDir: join(base, 'state'),
    config: { fileTransfer: { roots: [root] } },
  };
  return { base, root, outside, ctx };
}

const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const b64 = (data: string | Buffer) => Buffer.from(data).toString('base64');

describe('file transfer node commands', () => {
  it('declares the commands only when roots are configured, file.write once per idempotencyKey', async () => {
    const kernel = (nodeHost: unknown) =>
      ({ capabilities: { find: async () => undefined }, plugins: () => [], config: () => ({ nodeHost }) }) as never;
    const declared = (nodeHost: unknown) =>
      Object.keys(extraNodeCommands({ kernel: kernel(nodeHost), stateDir: '/x' }));
    expect(declared(undefined)).toEqual([]);
    expect(declared({ fileTransfer: { roots: [] } })).toEqual([]);
    const some = extraNodeCommands({ kernel: kernel({ fileTransfer: { roots: ['/tmp'] } }), stateDir: '/x' });
    expect(Object.keys(some).sort()).toEqual(['dir.list', 'file.fetch', 'file.stat', 'file.write']);
    expect(Object.values(some).map((command) => command.cap)).toEqual(['file', 'file', 'file', 'file']);
    expect(some['file.write']!.once).toBe(true);
    expect(some['file.fetch']!.once).toBeUndefined();
    // The dispatcher's answer: OpenClaw's payload, refusals included (they are payloads, not invoke errors).
    const answer = await some['file.stat']!.run({ path: '/etc/passwd' }, { signal: new AbortController().signal });
    expect(answer).toMatchObject({ ok: true, payload: { ok: false, code: 'PATH_POLICY_DENIED' } });
  });

  it('lists, stats and fetches inside a root with OpenClaw payloads', async () => {
    const { root, ctx } = setup();
    const listed = (await dirList({ path: root }, ctx)) as Record<string, unknown>;
    expect(listed).toMatchObject({ ok: true, path: root, truncated: false, binding: { kind: 'existing' } });
    expect(listed.entries).toEqual([
      expect.objectContaining({ name: 'b.bin', path: join(root, 'b.bin'), size: 4, isDir: false }),
      expect.objectContaining({ name: 'docs', isDir: true, size: 0, mimeType: 'inode/directory' }),
    ]);
    const paged = (await dirList({ path: root, maxEntries: 1 }, ctx)) as Record<string, unknown>;
    expect(paged).toMatchObject({ truncated: true, nextPageToken: '1' });
    const rest = (await dirList({ path: root, maxEntries: 1, pageToken: '1' }, ctx)) as { entries: unknown[] };
    expect(rest.entries).toEqual([expect.objectContaining({ name: 'docs' })]);

    const stat = await fileStat({ path: join(root, 'docs', 'a.txt') }, ctx);
    expect(stat).toMatchObject({ ok: true, type: 'file', size: 6, path: join(root, 'docs', 'a.txt') });
    expect(await fileStat({ path: join(root, 'docs') }, ctx)).toMatchObject({ ok: true, type: 'directory' });

    const fetched = (await fileFetch({ path: join(root, 'docs', 'a.txt') }, ctx)) as Record<string, unknown>;
    expect(fetched).toMatchObject({
      ok: true,
      path: join(root, 'docs', 'a.txt'),
      size: 6,
      mimeType: 'text/plain',
      base64: b64('hello\n'),
      sha256: sha('hello\n'),
    });
    const binary = await fileFetch({ path: join(root, 'b.bin') }, ctx);
    expect(binary).toMatchObject({
      ok: true,
      mimeType: 'application/octet-stream',
      base64: b64(Buffer.from([0, 1, 2, 3])),
    });
    // preflight, then the real call bound to what the preflight saw (as OpenClaw's gateway does).
    const preflight = (await fileFetch({ path: join(root, 'b.bin'), preflightOnly: true }, ctx)) as {
      binding: unknown;
    };
    expect(preflight).toMatchObject({ ok: true, preflightOnly: true, base64: '' });
    expect(await fileFetch({ path: join(root, 'b.bin'), expectedBinding: preflight.binding }, ctx)).toMatchObject({
      ok: true,
    });
    expect(
      await fileFetch({ path: join(root, 'docs', 'a.txt'), expectedBinding: preflight.binding }, ctx),
    ).toMatchObject({ ok: false, code: 'CANONICAL_PATH_CHANGED' });
    expect(
      await fileFetch({ path: join(root, 'b.bin'), expectedCanonicalPath: join(root, 'other') }, ctx),
    ).toMatchObject({ ok: false, code: 'CANONICAL_PATH_CHANGED' });
  });

  it('refuses paths outside the roots, "..", relative paths and missing files, naming the path', async () => {
    const { root, outside, ctx } = setup();
    const out = await fileFetch({ path: join(outside, 'secret.txt') }, ctx);
    expect(out).toMatchObject({ ok: false, code: 'PATH_POLICY_DENIED' });
    expect((out as { message: string }).message).toContain(join(outside, 'secret.txt'));
    expect((out as { message: string }).message).toContain('nodeHost.fileTransfer.roots');
    expect(await fileFetch({ path: `${root}/../outside/secret.txt` }, ctx)).toMatchObject({
      ok: false,
      code: 'INVALID_PATH',
      message: expect.stringContaining('".."'),
    });
    expect(await dirList({ path: 'share/docs' }, ctx)).toMatchObject({ ok: false, code: 'INVALID_PATH' });
    expect(await fileStat({ path: `${root}/x\0y` }, ctx)).toMatchObject({ ok: false, code: 'INVALID_PATH' });
    expect(await fileStat({}, ctx)).toMatchObject({ ok: false, code: 'INVALID_PATH', message: 'path is required' });
    expect(await fileFetch({ path: join(root, 'nope.txt') }, ctx)).toMatchObject({
      ok: false,
      code: 'NOT_FOUND',
      message: `${join(root, 'nope.txt')}: not found`,
    });
    expect(await fileFetch({ path: join(root, 'docs') }, ctx)).toMatchObject({ ok: false, code: 'IS_DIRECTORY' });
    expect(await dirList({ path: join(root, 'b.bin') }, ctx)).toMatchObject({ ok: false, code: 'IS_FILE' });
    // A root's sibling with the same prefix is not inside it.
    mkdirSync(`${root}2`);
    writeFileSync(join(`${root}2`, 'x'), 'x');
    expect(await fileFetch({ path: join(`${root}2`, 'x') }, ctx)).toMatchObject({ code: 'PATH_POLICY_DENIED' });
    // A configured root that does not exist says so.
    const missing = { ...ctx, config: { fileTransfer: { roots: [join(root, 'gone')] } } };
    expect(await fileStat({ path: join(root, 'gone', 'f') }, missing)).toMatchObject({
      ok: false,
      code: 'ROOT_UNAVAILABLE',
      message: expect.stringContaining(join(root, 'gone')),
    });
  });

  it('refuses symlinks that lead out, links at the end of a path, and links unless followSymlinks', async () => {
    const { root, outside, ctx } = setup();
    symlinkSync(outside, join(root, 'escape'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'secret-link.txt'));
    symlinkSync(join(root, 'docs'), join(root, 'docs-link'));
    symlinkSync(join(root, 'docs', 'a.txt'), join(root, 'a-link.txt'));

    for (const followSymlinks of [false, true]) {
      const escaped = await fileFetch({ path: join(root, 'escape', 'secret.txt'), followSymlinks }, ctx);
      expect(escaped).toMatchObject({ ok: false, code: followSymlinks ? 'PATH_POLICY_DENIED' : 'SYMLINK_REDIRECT' });
      expect(JSON.stringify(escaped)).not.toContain('"base64"');
      expect(await dirList({ path: join(root, 'escape'), followSymlinks }, ctx)).toMatchObject({ ok: false });
      // A link as the file itself is refused even when it stays inside the root.
      expect(await fileFetch({ path: join(root, 'a-link.txt'), followSymlinks }, ctx)).toMatchObject({
        ok: false,
        code: 'SYMLINK_REDIRECT',
      });
      expect(await fileFetch({ path: join(root, 'secret-link.txt'), followSymlinks }, ctx)).toMatchObject({
        ok: false,
      });
      expect(
        await fileWrite(
          { path: join(root, 'a-link.txt'), contentBase64: b64('x'), overwrite: true, followSymlinks },
          ctx,
        ),
      ).toMatchObject({ ok: false, code: 'SYMLINK_TARGET_DENIED' });
      expect(
        await fileWrite({ path: join(root, 'escape', 'new.txt'), contentBase64: b64('x'), followSymlinks }, ctx),
      ).toMatchObject({ ok: false });
    }
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(readFileSync(join(root, 'docs', 'a.txt'), 'utf8')).toBe('hello\n');

    // A directory link that stays inside the root: followed only when asked, reported by its real path.
    expect(await fileFetch({ path: join(root, 'docs-link', 'a.txt') }, ctx)).toMatchObject({
      ok: false,
      code: 'SYMLINK_REDIRECT',
      message: expect.stringContaining('followSymlinks'),
    });
    expect(await fileFetch({ path: join(root, 'docs-link', 'a.txt'), followSymlinks: true }, ctx)).toMatchObject({
      ok: true,
      path: join(root, 'docs', 'a.txt'),
    });
    expect(await dirList({ path: join(root, 'docs-link'), followSymlinks: true }, ctx)).toMatchObject({
      ok: true,
      path: join(root, 'docs'),
    });
  });

  it('writes atomically, refuses to overwrite unless asked, verifies sha256 and the 16 MiB limit', async () => {
    const { root, ctx } = setup();
    const target = join(root, 'docs', 'new.txt');
    const written = await fileWrite({ path: target, contentBase64: b64('one'), expectedSha256: sha('one') }, ctx);
    expect(written).toMatchObject({ ok: true, path: target, size: 3, sha256: sha('one'), overwritten: false });
    expect(readFileSync(target, 'utf8')).toBe('one');
    expect(statSync(target).mode & 0o777).toBe(0o600);

    const again = await fileWrite({ path: target, contentBase64: b64('two') }, ctx);
    expect(again).toMatchObject({ ok: false, code: 'EXISTS_NO_OVERWRITE', message: expect.stringContaining(target) });
    expect(readFileSync(target, 'utf8')).toBe('one');
    const replaced = await fileWrite({ path: target, contentBase64: b64('two'), overwrite: true }, ctx);
    expect(replaced).toMatchObject({ ok: true, overwritten: true });
    expect(readFileSync(target, 'utf8')).toBe('two');

    const mismatch = await fileWrite(
      { path: join(root, 'c.txt'), contentBase64: b64('abc'), expectedSha256: sha('abd') },
      ctx,
    );
    expect(mismatch).toMatchObject({ ok: false, code: 'INTEGRITY_FAILURE' });
    expect(existsSync(join(root, 'c.txt'))).toBe(false);
    expect(await fileWrite({ path: join(root, 'c.txt'), contentBase64: 'not base64!' }, ctx)).toMatchObject({
      ok: false,
      code: 'INVALID_BASE64',
    });
    const huge = Buffer.alloc(TRANSFER_MAX_BYTES + 1).toString('base64');
    expect(await fileWrite({ path: join(root, 'big.bin'), contentBase64: huge }, ctx)).toMatchObject({
      ok: false,
      code: 'FILE_TOO_LARGE',
    });
    expect(await fileWrite({ path: join(root, 'docs'), contentBase64: b64('x'), overwrite: true }, ctx)).toMatchObject({
      ok: false,
      code: 'IS_DIRECTORY',
    });

    // Parents: refused unless createParents, then made inside the root.
    const deep = join(root, 'x', 'y', 'z.txt');
    expect(await fileWrite({ path: deep, contentBase64: b64('z') }, ctx)).toMatchObject({
      ok: false,
      code: 'PARENT_NOT_FOUND',
    });
    expect(await fileWrite({ path: deep, contentBase64: b64('z'), createParents: true }, ctx)).toMatchObject({
      ok: true,
      path: deep,
    });
    expect(readFileSync(deep, 'utf8')).toBe('z');
    // No temporary file is left behind.
    expect(readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    // Preflight returns a write binding; the real write with it succeeds, a stale one is refused.
    const path = join(root, 'bound.txt');
    const pre = (await fileWrite({ path, contentBase64: b64('b'), preflightOnly: true }, ctx)) as { binding: unknown };
    expect(pre).toMatchObject({ ok: true, binding: { kind: 'write', anchorPath: root } });
    expect(existsSync(path)).toBe(false);
    expect(await fileWrite({ path, contentBase64: b64('b'), expectedBinding: pre.binding }, ctx)).toMatchObject({
      ok: true,
    });
    expect(
      await fileWrite({ path, contentBase64: b64('c'), overwrite: true, expectedBinding: pre.binding }, ctx),
    ).toMatchObject({ ok: false, code: 'CANONICAL_PATH_CHANGED' });
  });

  it('refuses a fetch over the limit and a binary transport it does not offer', async () => {
    const { root, ctx } = setup();
    // Several read chunks, the bytes and digest intact.
    const big = Buffer.alloc(2.5 * 1024 * 1024, 'claw node ');
    writeFileSync(join(root, 'big.txt'), big);
    const fetched = (await fileFetch({ path: join(root, 'big.txt') }, ctx)) as Record<string, unknown>;
    expect(fetched).toMatchObject({ ok: true, size: big.length, sha256: sha(big), mimeType: 'text/plain' });
    expect(Buffer.from(fetched.base64 as string, 'base64').equals(big)).toBe(true);
    writeFileSync(join(root, 'ten.bin'), Buffer.alloc(10));
    expect(await fileFetch({ path: join(root, 'ten.bin'), maxBytes: 5 }, ctx)).toMatchObject({
      ok: false,
      code: 'FILE_TOO_LARGE',
      message: `${join(root, 'ten.bin')} is 10 bytes; the limit is 5`,
    });
    expect(await fileFetch({ path: join(root, 'ten.bin'), transport: 'binary', maxBytes: 10 }, ctx)).toMatchObject({
      ok: false,
      code: 'INVALID_PARAMS',
    });
    expect(await fileFetch({ path: join(root, 'ten.bin'), rootPath: join(root, 'docs') }, ctx)).toMatchObject({
      ok: false,
      code: 'PATH_POLICY_DENIED',
    });
  });
});
