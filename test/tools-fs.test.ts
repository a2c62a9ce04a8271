import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { REPO, tempDir } from './helpers.js';

const PLUGIN = join(REPO, 'plugins', 'tools-fs');

let kernel: TestKernel;
let small: TestKernel;
/** A tool runs only through the kernel's choke point (policy, params check, masking). */
interface ToolHandle {
  kernel: TestKernel;
  name: string;
}
const tool = (owner: TestKernel, name: string): ToolHandle => ({ kernel: owner, name });
let tools: Record<'read' | 'write' | 'edit' | 'apply_patch', ToolHandle>;

beforeAll(async () => {
  kernel = await createTestKernel({ plugins: [PLUGIN] });
  small = await createTestKernel({
    plugins: [PLUGIN],
    config: { plugins: { entries: { 'tools-fs': { config: { maxReadLines: 5, maxReadBytes: 1024 } } } } },
  });
  tools = {
    read: tool(kernel, 'read'),
    write: tool(kernel, 'write'),
    edit: tool(kernel, 'edit'),
    apply_patch: tool(kernel, 'apply_patch'),
  };
});

afterAll(async () => {
  await kernel.dispose();
  await small.dispose();
});

async function run(handle: ToolHandle, params: Record<string, unknown>, workspaceDir: string): Promise<ToolResult> {
  return (
    await handle.kernel.plugins.kernelServices.tools.invoke({
      name: handle.name,
      params,
      toolCallId: 'x',
      context: { workspaceDir },
    })
  ).result;
}

function text(result: ToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : `<${part.mimeType}>`)).join('');
}

function numbered(count: number): string {
  return Array.from({ length: count }, (_, k) => `line ${k + 1}`).join('\n') + '\n';
}

describe('tools-fs plugin', () => {
  it('is on by default and declares the four tools', () => {
    const record = kernel.plugins.get('tools-fs')!;
    expect(record.manifest?.tools).toEqual(['read', 'write', 'edit', 'apply_patch']);
    expect(
      kernel.capabilities
        .list('tool')
        .map((tool) => tool.name)
        .sort(),
    ).toEqual(['apply_patch', 'edit', 'read', 'write']);
  });
});

describe('read', () => {
  it('returns a whole small file, relative to the workspace', async () => {
    const ws = tempDir();
    writeFileSync(join(ws, 'a.txt'), 'alpha\nbeta\n');
    const result = await run(tools.read, { path: 'a.txt' }, ws);
    expect(result.isError).toBeUndefined();
    expect(text(result)).toBe('alpha\nbeta');
    expect(result.details).toEqual({
      path: join(ws, 'a.txt'),
      totalLines: 2,
      startLine: 1,
      endLine: 2,
      truncated: false,
    });
  });

  it('reads a window with offset and limit and says where to continue', async () => {
    const ws = tempDir();
    writeFileSync(join(ws, 'n.txt'), numbered(10));
    const result = await run(tools.read, { path: join(ws, 'n.txt'), offset: 3, limit: 2 }, ws);
    expect(text(result)).toBe('line 3\nline 4\n\n[Showing lines 3-4 of 10. Use offset=5 to continue.]');
    expect(result.details).toMatchObject({ startLine: 3, endLine: 4, totalLines: 10, truncated: false, nextOffset: 5 });
    const tail = await run(tools.read, { path: 'n.txt', offset: 9 }, ws);
    expect(text(tail)).toBe('line 9\nline 10');
  });

  it('caps output at maxReadLines and continues from the next offset', async () => {
    const ws = tempDir();
    writeFileSync(join(ws, 'n.txt'), numbered(12));
    const read = tool(small, 'read');
    const first = await run(read, { path: 'n.txt' }, ws);
    expect(text(first)).toBe(
      'line 1\nline 2\nline 3\nline 4\nline 5\n\n[Showing lines 1-5 of 12 (5-line limit). Use offset=6 to continue.]',
    );
    expect(first.details).toMatchObject({ truncated: true, truncatedBy: 'lines', nextOffset: 6, endLine: 5 });
    const second = await run(read, { path: 'n.txt', offset: 6 }, ws);
    expect(second.details).toMatchObject({ startLine: 6, endLine: 10, nextOffset: 11 });
    const last = await run(read, { path: 'n.txt', offset: 11 }, ws);
    expect(text(last)).toBe('line 11\nline 12');
    expect(last.details).toMatchObject({ truncated: false, endLine: 12 });
    expect(last.details).not.toHaveProperty('nextOffset');
  });

  it('caps output at maxReadBytes, and shows only the start of a line longer than the cap', async () => {
    const ws = tempDir();
    const row = 'x'.repeat(300);
    writeFileSync(join(ws, 'wide.txt'), `${row}\n${row}\n${row}\n${row}\n`);
    const read = tool(small, 'read');
    const result = await run(read, { path: 'wide.txt' }, ws);
    expect(text(result)).toBe(
      `${row}\n${row}\n${row}\n\n[Showing lines 1-3 of 4 (1024-byte limit). Use offset=4 to continue.]`,
    );
    expect(result.details).toMatchObject({ truncated: true, truncatedBy: 'bytes', nextOffset: 4 });

    writeFileSync(join(ws, 'long.txt'), `${'é'.repeat(1000)}\nnext\n`);
    const cut = await run(read, { path: 'long.txt' }, ws);
    const shown = text(cut).split('\n')[0]!;
    expect(shown).toBe('é'.repeat(512));
    expect(text(cut)).toContain('Line 1 is 2000 bytes, over the 1024-byte limit; only its beginning is shown.');
    expect(text(cut)).toContain('Use offset=2 to continue.');
    expect(cut.details).toMatchObject({ truncated: true, cutLine: 1, nextOffset: 2 });
  });

  it('handles empty files, offsets past the end, missing files and directories', async () => {
    const ws = tempDir();
    writeFileSync(join(ws, 'empty.txt'), '');
    writeFileSync(join(ws, 'two.txt'), 'a\nb');
    expect(text(await run(tools.read, { path: 'empty.txt' }, ws))).toBe('[The file is empty.]');
    const past = await run(tools.read, { path: 'two.txt', offset: 3 }, ws);
    expect(past).toMatchObject({
      isError: true,
      content: [{ text: 'offset 3 is past the end of two.txt, which has 2 lines' }],
    });
    expect(await run(tools.read, { path: 'nope.txt' }, ws)).toMatchObject({
      isError: true,
      content: [{ text: 'nope.txt: no such file or directory' }],
    });
    expect(text(await run(tools.read, { path: '.' }, ws))).toMatch(/is a directory/);
    expect(await run(tools.read, { path: 'two.txt', offset: 0 }, ws)).toMatchObject({
      isError: true,
      content: [{ text: 'Invalid arguments for read: offset: must be >= 1' }],
    });
    expect(await run(tools.read, {}, ws)).toMatchObject({
      isError: true,
      content: [{ text: 'Invalid arguments for read: path: is required' }],
    });
  });

  it('returns images as an image part and refuses other binary files', async () => {
    const ws = tempDir();
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(32, 7)]);
    writeFileSync(join(ws, 'pic.dat'), png);
    const image = await run(tools.read, { path: 'pic.dat' }, ws);
    expect(image.content[1]).toEqual({ type: 'image', data: png.toString('base64'), mimeType: 'image/png' });
    expect(image.details).toEqual({ path: join(ws, 'pic.dat'), mimeType: 'image/png', bytes: png.length });

    writeFileSync(join(ws, 'blob.bin'), Buffer.from([1, 2, 0, 3, 4, 0, 5]));
    const binary = await run(tools.read, { path: 'blob.bin' }, ws);
    expect(binary.isError).toBe(true);
    expect(text(binary)).toMatch(/^Cannot read blob\.bin as text: it looks binary \(7 bytes\)/);

    writeFileSync(join(ws, 'fake.png'), Buffer.from([0, 0, 0, 1, 2, 3]));
    expect(text(await run(tools.read, { path: 'fake.png' }, ws))).toMatch(
      /its name says image\/png, but it is not a valid/,
    );
  });
});

describe('write', () => {
  it('creates parent directories, reports bytes and leaves no temporary file', async () => {
    const ws = tempDir();
    const result = await run(tools.write, { path: 'deep/er/file.txt', content: 'héllo\n' }, ws);
    expect(text(result)).toBe('Created deep/er/file.txt (7 bytes)');
    expect(result.details).toEqual({ path: join(ws, 'deep/er/file.txt'), bytes: 7, created: true });
    expect(readFileSync(join(ws, 'deep/er/file.txt'), 'utf8')).toBe('héllo\n');
    expect(readdirSync(join(ws, 'deep/er'))).toEqual(['file.txt']);
  });

  it('overwrites an existing file and keeps its permissions', async () => {
    const ws = tempDir();
    const path = join(ws, 'run.sh');
    writeFileSync(path, 'old');
    chmodSync(path, 0o750);
    const result = await run(tools.write, { path, content: '' }, ws);
    expect(text(result)).toBe(`Wrote ${path} (0 bytes)`);
    expect(readFileSync(path, 'utf8')).toBe('');
    expect(statSync(path).mode & 0o777).toBe(0o750);
    expect(await run(tools.write, { path: '.', content: 'x' }, ws)).toMatchObject({ isError: true });
    expect(await run(tools.write, { path: 'a.txt' }, ws)).toMatchObject({
      isError: true,
      content: [{ text: 'Invalid arguments for write: content: is required' }],
    });
  });
});

describe('edit', () => {
  it('replaces a unique span literally and returns a small diff', async () => {
    const ws = tempDir();
    writeFileSync(join(ws, 'a.ts'), 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n');
    const result = await run(tools.edit, { path: 'a.ts', oldText: 'four\n', newText: 'FOUR $& $1\n' }, ws);
    expect(text(result)).toBe('Edited a.ts: replaced 1 occurrence at line 4.');
    expect(readFileSync(join(ws, 'a.ts'), 'utf8')).toBe('one\ntwo\nthree\nFOUR $& $1\nfive\nsix\nseven\neight\n');
    expect(result.details).toEqual({
      path: join(ws, 'a.ts'),
      firstChangedLine: 4,
      diff: [
        '--- a/a.ts',
        '+++ b/a.ts',
        '@@ -1,7 +1,7 @@',
        ' one',
        ' two',
        ' three',
        '-four',
        '+FOUR $& $1',
        ' five',
        ' six',
        ' seven',
      ].join('\n'),
    });
  });

  it('refuses when oldText is missing or ambiguous, leaving the file untouched', async () => {
    const ws = tempDir();
    const path = join(ws, 'b.txt');
    writeFileSync(path, 'x = 1\ny = 2\nx = 1\n');
    const none = await run(tools.edit, { path: 'b.txt', oldText: 'z = 3', newText: 'z = 4' }, ws);
    expect(none.isError).toBe(true);
    expect(text(none)).toMatch(/^edit: oldText was not found in b\.txt\. It must match the file exactly/);
    const many = await run(tools.edit, { path: 'b.txt', oldText: 'x = 1', newText: 'x = 2' }, ws);
    expect(many.isError).toBe(true);
    expect(text(many)).toBe(
      'edit: oldText occurs 2 times in b.txt (at lines 1, 3). Include more surrounding context in oldText so it matches exactly once.',
    );
    expect(many.details).toMatchObject({ occurrences: 2, lines: [1, 3] });
    expect(readFileSync(path, 'utf8')).toBe('x = 1\ny = 2\nx = 1\n');
    expect(await run(tools.edit, { path: 'b.txt', oldText: 'y', newText: 'y' }, ws)).toMatchObject({ isError: true });
    expect(await run(tools.edit, { path: 'b.txt', oldText: '', newText: 'y' }, ws)).toMatchObject({ isError: true });
    expect(await run(tools.edit, { path: 'missing.txt', oldText: 'a', newText: 'b' }, ws)).toMatchObject({
      isError: true,
      content: [{ text: 'missing.txt: no such file or directory' }],
    });
  });

  it('matches LF oldText in a CRLF file and keeps CRLF line endings', async () => {
    const ws = tempDir();
    writeFileSync(join(ws, 'w.txt'), 'a\r\nb\r\nc\r\n');
    const result = await run(tools.edit, { path: 'w.txt', oldText: 'a\nb', newText: 'A\nB' }, ws);
    expect(result.isError).toBeUndefined();
    expect(readFileSync(join(ws, 'w.txt'), 'utf8')).toBe('A\r\nB\r\nc\r\n');
  });
});

describe('apply_patch', () => {
  function workspace(): string {
    const ws = tempDir();
    mkdirSync(join(ws, 'src'));
    writeFileSync(
      join(ws, 'src/app.ts'),
      'import x from "x";\n\nfunction main() {\n  const foo = 1;\n  return foo;\n}\n\nfunction other() {\n  const foo = 1;\n}\n',
    );
    writeFileSync(join(ws, 'src/old.ts'), 'export const a = 1;\nexport const b = 2;\n');
    writeFileSync(join(ws, 'obsolete.txt'), 'bye\n');
    writeFileSync(join(ws, 'tail.txt'), 'first\nlast\n');
    return ws;
  }

  it('adds, updates (with @@ context), moves, appends at end of file and deletes in one patch', async () => {
    const ws = workspace();
    const input = [
      '*** Begin Patch',
      '*** Add File: docs/new.md',
      '+# Title',
      '+',
      '+body',
      '*** Update File: src/app.ts',
      '@@ function other() {',
      '-  const foo = 1;',
      '+  const foo = 2;',
      '*** Update File: src/old.ts',
      '*** Move to: src/new.ts',
      '@@',
      ' export const a = 1;',
      '-export const b = 2;',
      '+export const b = 3;',
      '*** Update File: tail.txt',
      '@@',
      '+appended',
      '*** End of File',
      '*** Delete File: obsolete.txt',
      '*** End Patch',
    ].join('\n');
    const result = await run(tools.apply_patch, { input }, ws);
    expect(text(result)).toBe(
      'Applied patch:\nA docs/new.md\nM src/app.ts\nR src/old.ts -> src/new.ts\nM tail.txt\nD obsolete.txt',
    );
    expect(readFileSync(join(ws, 'docs/new.md'), 'utf8')).toBe('# Title\n\nbody\n');
    expect(readFileSync(join(ws, 'src/app.ts'), 'utf8')).toContain('function main() {\n  const foo = 1;');
    expect(readFileSync(join(ws, 'src/app.ts'), 'utf8')).toContain('function other() {\n  const foo = 2;\n}\n');
    expect(readFileSync(join(ws, 'src/new.ts'), 'utf8')).toBe('export const a = 1;\nexport const b = 3;\n');
    expect(existsSync(join(ws, 'src/old.ts'))).toBe(false);
    expect(readFileSync(join(ws, 'tail.txt'), 'utf8')).toBe('first\nlast\nappended\n');
    expect(existsSync(join(ws, 'obsolete.txt'))).toBe(false);
    expect(result.details).toMatchObject({
      added: ['docs/new.md'],
      modified: ['src/app.ts', 'tail.txt'],
      deleted: ['obsolete.txt'],
      moved: [{ from: 'src/old.ts', to: 'src/new.ts' }],
    });
    const diffs = (result.details as { diffs: Array<{ path: string; diff: string }> }).diffs;
    expect(diffs.map((diff) => diff.path)).toEqual(['src/app.ts', 'src/new.ts', 'tail.txt']);
    expect(diffs[0]!.diff).toContain('-  const foo = 1;\n+  const foo = 2;');
  });

  it('applies nothing when one hunk does not match, and names the file and hunk', async () => {
    const ws = workspace();
    const before = readdirSync(ws).sort();
    const app = readFileSync(join(ws, 'src/app.ts'), 'utf8');
    const input = [
      '*** Begin Patch',
      '*** Add File: created.txt',
      '+new',
      '*** Delete File: obsolete.txt',
      '*** Update File: src/app.ts',
      '@@',
      '-import x from "x";',
      '+import y from "y";',
      '@@',
      ' function main() {',
      '-  const bar = 1;',
      '+  const bar = 2;',
      '*** End Patch',
    ].join('\n');
    const result = await run(tools.apply_patch, { input }, ws);
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(
      'apply_patch: src/app.ts: hunk 2 (patch line 9) did not match: these lines were not found after line 1:\n' +
        '  function main() {\n    const bar = 1;' +
        '. No files were changed.',
    );
    expect(readdirSync(ws).sort()).toEqual(before);
    expect(readFileSync(join(ws, 'src/app.ts'), 'utf8')).toBe(app);
    expect(readFileSync(join(ws, 'obsolete.txt'), 'utf8')).toBe('bye\n');
  });

  it('rejects adding an existing file, touching a missing one, and malformed patches', async () => {
    const ws = workspace();
    const patch = (...body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');
    const cases: Array<[string, RegExp]> = [
      [patch('*** Add File: tail.txt', '+x'), /^apply_patch: Add File: tail\.txt already exists/],
      [patch('*** Update File: ghost.ts', '@@', '-a', '+b'), /^apply_patch: Update File: ghost\.ts does not exist/],
      [patch('*** Delete File: ghost.ts'), /^apply_patch: Delete File: ghost\.ts does not exist/],
      [
        patch('*** Update File: src/old.ts', '*** Move to: tail.txt', '@@', '-export const a = 1;', '+x'),
        /^apply_patch: Move to: tail\.txt already exists/,
      ],
      [
        patch('*** Update File: tail.txt', '@@ nowhere', '+x'),
        /^apply_patch: tail\.txt: hunk 1 \(patch line 3\): context line "@@ nowhere" was not found/,
      ],
      [
        '*** Update File: tail.txt\n*** End Patch',
        /^apply_patch: invalid patch: the patch must start with "\*\*\* Begin Patch"/,
      ],
      [
        '*** Begin Patch\n*** Delete File: tail.txt',
        /^apply_patch: invalid patch: the patch must end with "\*\*\* End Patch"/,
      ],
      [patch('*** Frobnicate: x'), /^apply_patch: invalid patch: patch line 2: expected "\*\*\* Add File:"/],
      [patch('*** Add File: y.txt', 'no plus'), /every line must start with "\+"/],
      [patch('*** Update File: tail.txt'), /"Update File: tail\.txt" has no hunks/],
      [patch(), /the patch contains no file operations/],
    ];
    for (const [input, message] of cases) {
      const result = await run(tools.apply_patch, { input }, ws);
      expect(result.isError, input).toBe(true);
      expect(text(result)).toMatch(message);
      expect(text(result)).toMatch(/No files were changed\.$/);
    }
    expect(readFileSync(join(ws, 'tail.txt'), 'utf8')).toBe('first\nlast\n');
    expect(existsSync(join(ws, 'src/old.ts'))).toBe(true);
  });

  it('renames without hunks, inserts after an @@ line, and accepts absolute paths', async () => {
    const ws = workspace();
    const input = [
      '*** Begin Patch',
      '*** Update File: src/old.ts',
      '*** Move to: lib/renamed.ts',
      `*** Update File: ${join(ws, 'src/app.ts')}`,
      '@@ function main() {',
      '+  // entry point',
      '*** End Patch',
    ].join('\n');
    const result = await run(tools.apply_patch, { input }, ws);
    expect(text(result)).toBe(`Applied patch:\nR src/old.ts -> lib/renamed.ts\nM ${join(ws, 'src/app.ts')}`);
    expect(readFileSync(join(ws, 'lib/renamed.ts'), 'utf8')).toBe('export const a = 1;\nexport const b = 2;\n');
    expect(existsSync(join(ws, 'src/old.ts'))).toBe(false);
    expect(readFileSync(join(ws, 'src/app.ts'), 'utf8')).toContain(
      'function main() {\n  // entry point\n  const foo = 1;',
    );
  });

  it('tolerates whitespace drift in context, keeps CRLF files CRLF, and replaces a file deleted earlier in the patch', async () => {
    const ws = workspace();
    writeFileSync(join(ws, 'win.txt'), 'one\r\ntwo\r\nthree\r\n');
    const input = [
      '*** Begin Patch',
      '*** Update File: src/app.ts',
      '@@',
      ' function main() {   ',
      '-  const foo = 1;',
      '+  const foo = 10;',
      '*** Update File: win.txt',
      ' one',
      '-two',
      '+TWO',
      '*** Delete File: tail.txt',
      '*** Add File: tail.txt',
      '+fresh',
      '*** End Patch',
    ].join('\n');
    const result = await run(tools.apply_patch, { input }, ws);
    expect(result.isError).toBeUndefined();
    expect(readFileSync(join(ws, 'src/app.ts'), 'utf8')).toContain('function main() {\n  const foo = 10;');
    expect(readFileSync(join(ws, 'win.txt'), 'utf8')).toBe('one\r\nTWO\r\nthree\r\n');
    expect(readFileSync(join(ws, 'tail.txt'), 'utf8')).toBe('fresh\n');
  });
});
