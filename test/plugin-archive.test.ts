/**
 * `claw plugins install` refuses packages that reach outside themselves: archives holding
 * symlinks or hard links that lead out of the package, FIFOs and device nodes (found from
 * the tar headers, before anything is unpacked), folders holding the same, and manifests or
 * package.json files over the size cap. Archives are made by GNU tar where it can make the
 * attack, and written header by header where it cannot (device nodes without root, odd
 * pax records).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { checkArchive, checkTree } from '../apps/cli/plugins/contents.js';
import { claw, EMPTY_SCHEMA, tempDir, writePlugin } from './helpers.js';

interface Member {
  name: string;
  /** Tar type flag: '0' file, '1' hard link, '2' symlink, '3' char device, '4' block device, '5' dir, '6' FIFO, 'x' pax. */
  type?: string;
  link?: string;
  data?: string | Buffer;
  /** The size field, when it should differ from the data (a pax record overrides it). */
  size?: number;
}

const octal = (value: number, width: number) => `${value.toString(8).padStart(width - 1, '0')}\0`;

/** One ustar header block and its data blocks. */
function member({ name, type = '0', link = '', data = '', size }: Member): Buffer {
  const body = Buffer.from(data);
  const header = Buffer.alloc(512);
  header.write(name, 0, 100);
  header.write(octal(type === '5' ? 0o755 : 0o644, 8), 100);
  header.write(octal(0, 8), 108);
  header.write(octal(0, 8), 116);
  header.write(octal(size ?? body.length, 12), 124);
  header.write(octal(1_700_000_000, 12), 136);
  header.write(' '.repeat(8), 148);
  header.write(type, 156);
  header.write(link, 157, 100);
  header.write('ustar\u000000', 257);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return Buffer.concat([header, body, Buffer.alloc((512 - (body.length % 512)) % 512)]);
}

/** A pax record: "<length> <key>=<value>\n", the length counting itself. */
function paxRecord(key: string, value: string): string {
  const rest = ` ${key}=${value}\n`;
  let length = rest.length + 1;
  while (`${length}${rest}`.length !== length) length++;
  return `${length}${rest}`;
}

function tgz(file: string, members: Member[]): string {
  writeFileSync(file, gzipSync(Buffer.concat([...members.map(member), Buffer.alloc(1024)])));
  return file;
}

const MANIFEST = (id: string) => JSON.stringify({ id, configSchema: EMPTY_SCHEMA });
const GOOD: Member[] = [
  { name: 'package/', type: '5' },
  { name: 'package/openclaw.plugin.json', data: MANIFEST('tidy') },
  { name: 'package/index.js', data: 'export default { register() {} };' },
];
const RULE = 'a plugin may hold only files, directories and links that stay inside it';

function stateEnv() {
  const stateDir = tempDir('claw-archive-');
  return {
    stateDir,
    env: { OPENCLAW_STATE_DIR: stateDir, npm_config_offline: 'true', npm_config_cache: join(stateDir, '.npm-cache') },
  };
}

/** The error line: progress lines ("[1/6] Fetching…") come before it on stderr. */
const lastLine = (stderr: string) => stderr.trimEnd().split('\n').at(-1);

/** Nothing of a refused install may stay: no plugin folder, no staging folder, no config record. */
function nothingInstalled(stateDir: string): void {
  const extensions = join(stateDir, 'extensions');
  expect(existsSync(extensions) ? readdirSync(extensions) : []).toEqual([]);
  const config = join(stateDir, 'openclaw.json');
  if (existsSync(config)) expect(JSON.parse(readFileSync(config, 'utf8')).plugins?.installs ?? {}).toEqual({});
}

describe('claw plugins install refuses archives that reach outside the package', () => {
  it('an outward symlink and a FIFO, packed by GNU tar: refused before unpacking, naming the entry', async () => {
    const { stateDir, env } = stateEnv();
    const source = writePlugin(join(tempDir(), 'package'), {
      manifest: MANIFEST('sneaky'),
      code: 'export default { register() {} };',
    });
    symlinkSync('/etc/passwd', join(source, 'passwd'));
    const linked = join(tempDir(), 'linked.tgz');
    execFileSync('tar', ['-czf', linked, '-C', join(source, '..'), 'package']);

    const refused = await claw(['plugins', 'install', linked], env);
    expect(refused.code).toBe(1);
    expect(lastLine(refused.stderr)).toBe(
      `claw: refusing to install "${linked}": archive entry "package/passwd" is a symlink to "/etc/passwd", outside the package; ${RULE}`,
    );
    nothingInstalled(stateDir);

    const piped = writePlugin(join(tempDir(), 'package'), {
      manifest: MANIFEST('piped'),
      code: 'export default { register() {} };',
    });
    execFileSync('mkfifo', [join(piped, 'pipe')]);
    const fifo = join(tempDir(), 'fifo.tgz');
    execFileSync('tar', ['-czf', fifo, '-C', join(piped, '..'), 'package']);
    const blocked = await claw(['plugins', 'install', fifo], env);
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain(`refusing to install "${fifo}": archive entry "package/pipe" is a FIFO; ${RULE}`);
    nothingInstalled(stateDir);
  });

  it('a symlink that stays inside the package is installed and kept as written', async () => {
    const { stateDir, env } = stateEnv();
    const inner: Member[] = [
      { name: 'package/lib/', type: '5' },
      { name: 'package/lib/main.js', type: '2', link: '../index.js' },
    ];
    const file = tgz(join(tempDir(), 'tidy.tgz'), [...GOOD, ...inner]);
    const result = await claw(['plugins', 'install', file], env);
    expect(result.code, result.stderr).toBe(0);
    const installed = join(stateDir, 'extensions', 'tidy');
    expect(readlinkSync(join(installed, 'lib', 'main.js'))).toBe('../index.js');
    expect(readFileSync(join(installed, 'lib', 'main.js'), 'utf8')).toContain('register');
  });

  it('each kind of entry that reaches out, however the headers spell it', async () => {
    const dir = tempDir();
    const outside = (entry: string, kind: string, link: string) =>
      `archive entry "package/${entry}" is a ${kind} to "${link}", outside the package`;
    const symlink = (name: string, link: string): Member => ({ name: `package/${name}`, type: '2', link });
    const hardLink = (name: string, link: string): Member => ({ name: `package/${name}`, type: '1', link });
    const pax = (key: string, value: string): Member => ({
      name: 'PaxHeaders/x',
      type: 'x',
      data: paxRecord(key, value),
    });
    const far = `/${'d/'.repeat(60)}x`;
    const cases: Array<[string, Member[], string]> = [
      [
        'absolute symlink',
        [symlink('key', '/root/.ssh/id_ed25519')],
        outside('key', 'symlink', '/root/.ssh/id_ed25519'),
      ],
      ['symlink climbing out', [symlink('lib/up', '../../../etc')], outside('lib/up', 'symlink', '../../../etc')],
      ['symlink to the archive root', [symlink('up', '..')], outside('up', 'symlink', '..')],
      ['absolute hard link', [hardLink('shadow', '/etc/shadow')], outside('shadow', 'hard link', '/etc/shadow')],
      ['hard link climbing out', [hardLink('h', '../outside')], outside('h', 'hard link', '../outside')],
      ['character device', [{ name: 'package/mem', type: '3' }], 'archive entry "package/mem" is a character device'],
      ['block device', [{ name: 'package/disk', type: '4' }], 'archive entry "package/disk" is a block device'],
      ['FIFO', [{ name: 'package/pipe', type: '6' }], 'archive entry "package/pipe" is a FIFO'],
      [
        'member outside',
        [{ name: 'package/../x', data: 'x' }],
        'archive entry "package/../x" names a path outside the package',
      ],
      // The ustar name is harmless; the pax record renames the member, as tar would.
      [
        'pax path',
        [pax('path', 'package/renamed'), symlink('harmless', '/etc')],
        outside('renamed', 'symlink', '/etc'),
      ],
      [
        'pax linkpath',
        [pax('linkpath', '/etc/passwd'), symlink('l', 'index.js')],
        outside('l', 'symlink', '/etc/passwd'),
      ],
      [
        'GNU long link',
        [{ name: '@LongLink', type: 'K', data: `${far}\0` }, symlink('l', 'index.js')],
        outside('l', 'symlink', far),
      ],
      ['unknown entry type', [{ name: 'package/s', type: 'S' }], 'archive entry "package/s" has tar entry type "S"'],
      [
        'symlink with data',
        [{ ...symlink('l', 'a.js'), data: 'x'.repeat(600) }],
        'archive entry "package/l" is a symlink with 600 bytes',
      ],
    ];
    for (const [what, members, message] of cases) {
      const file = tgz(join(dir, `${what.replaceAll(' ', '-')}.tgz`), [...GOOD, ...members]);
      await expect(checkArchive(file), what).rejects.toThrow(message);
    }
    await expect(checkArchive(tgz(join(dir, 'good.tgz'), GOOD))).resolves.toBeUndefined();
  });

  it('reads past file data the way tar does: a pax size cannot hide a member inside a file', async () => {
    const hidden = member({ name: 'package/hidden', type: '2', link: '/etc' });
    const file = tgz(join(tempDir(), 'smuggled.tgz'), [
      ...GOOD,
      { name: 'PaxHeaders/x', type: 'x', data: paxRecord('size', '0') },
      // To a reader of the size field this is a 1024-byte file; to tar (and to the check) it is empty.
      { name: 'package/decoy.txt', data: Buffer.concat([hidden, Buffer.alloc(512)]), size: hidden.length + 512 },
    ]);
    // GNU tar sees the smuggled member.
    expect(execFileSync('tar', ['-tzf', file], { encoding: 'utf8' })).toContain('package/hidden');
    await expect(checkArchive(file)).rejects.toThrow(
      'archive entry "package/hidden" is a symlink to "/etc", outside the package',
    );
  });

  it('refuses damaged archives, naming the file', async () => {
    const dir = tempDir();
    const bad = gzipSync(Buffer.concat([member(GOOD[1]!), Buffer.alloc(1024)]));
    bad[0] = 0; // no longer gzip
    writeFileSync(join(dir, 'bad.tgz'), bad);
    await expect(checkArchive(join(dir, 'bad.tgz'))).rejects.toThrow(`cannot read archive ${join(dir, 'bad.tgz')}: `);
    const header = member(GOOD[1]!);
    header[0] = 'q'.charCodeAt(0); // the checksum no longer matches
    writeFileSync(join(dir, 'sum.tgz'), gzipSync(Buffer.concat([header, Buffer.alloc(1024)])));
    await expect(checkArchive(join(dir, 'sum.tgz'))).rejects.toThrow('damaged tar header (checksum mismatch)');
  });
});

describe('claw plugins install refuses folders that reach outside the plugin', () => {
  it('an outward symlink or a FIFO in the folder: refused, naming it; inner links are copied as written', async () => {
    const { stateDir, env } = stateEnv();
    const dir = writePlugin(join(tempDir(), 'outward'), {
      manifest: MANIFEST('outward'),
      code: 'export default { register() {} };',
    });
    mkdirSync(join(dir, 'lib'));
    symlinkSync('../../../../../../etc', join(dir, 'lib', 'etc'));
    const refused = await claw(['plugins', 'install', dir], env);
    expect(refused.code).toBe(1);
    expect(lastLine(refused.stderr)).toBe(
      `claw: refusing to install "${dir}": "lib/etc" is a symlink to "../../../../../../etc", outside the plugin directory; ${RULE}`,
    );
    nothingInstalled(stateDir);

    const piped = writePlugin(join(tempDir(), 'piped'), {
      manifest: MANIFEST('piped'),
      code: 'export default { register() {} };',
    });
    execFileSync('mkfifo', [join(piped, 'pipe')]);
    const blocked = await claw(['plugins', 'install', piped], env);
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain(`refusing to install "${piped}": "pipe" is a FIFO; ${RULE}`);
    nothingInstalled(stateDir);

    // A relative link inside stays relative: resolved, it would point back into the source folder.
    const tidy = writePlugin(join(tempDir(), 'tidy'), {
      manifest: MANIFEST('tidy'),
      code: 'export default { register() {} };',
    });
    symlinkSync('index.js', join(tidy, 'main.js'));
    const ok = await claw(['plugins', 'install', tidy], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(readlinkSync(join(stateDir, 'extensions', 'tidy', 'main.js'))).toBe('index.js');
  });

  it('judges links by where they lead, through other links; an absolute one is refused even inside', () => {
    const dir = writePlugin(join(tempDir(), 'chain'), { manifest: MANIFEST('chain') });
    mkdirSync(join(dir, 'x', 'y'), { recursive: true });
    // Each link, read alone, stays inside; followed, `top/..` is the folder above the plugin.
    symlinkSync('../..', join(dir, 'x', 'y', 'top'));
    symlinkSync('x/y/top/..', join(dir, 'escape'));
    expect(() => checkTree(dir)).toThrow(`"escape" is a symlink to "x/y/top/..", outside the plugin directory`);

    const absolute = writePlugin(join(tempDir(), 'absolute'), { manifest: MANIFEST('absolute') });
    symlinkSync(join(absolute, 'openclaw.plugin.json'), join(absolute, 'self.json'));
    const self = join(absolute, 'openclaw.plugin.json');
    expect(() => checkTree(absolute)).toThrow(`"self.json" is a symlink to "${self}", outside the plugin directory`);
    // node_modules and .git are not copied, so what is in them is not judged.
    const skipped = writePlugin(join(tempDir(), 'skipped'), { manifest: MANIFEST('skipped') });
    mkdirSync(join(skipped, 'node_modules', '.bin'), { recursive: true });
    symlinkSync('/usr/bin/env', join(skipped, 'node_modules', '.bin', 'env'));
    expect(() => checkTree(skipped, ['node_modules', '.git'])).not.toThrow();
    expect(lstatSync(join(skipped, 'node_modules', '.bin', 'env')).isSymbolicLink()).toBe(true);
  });
});

describe('claw plugins install caps manifest sizes', () => {
  it('refuses a manifest or a package.json over 256 KiB, naming the file and the cap', async () => {
    const { stateDir, env } = stateEnv();
    const dir = writePlugin(join(tempDir(), 'huge'), {
      manifest: MANIFEST('huge'),
      code: 'export default { register() {} };',
    });
    truncateSync(join(dir, 'openclaw.plugin.json'), 60 * 1024 * 1024);
    const huge = await claw(['plugins', 'install', dir], env);
    expect(huge.code).toBe(1);
    expect(lastLine(huge.stderr)).toBe(
      `claw: refusing to install "${dir}": openclaw.plugin.json is over the 256 KiB manifest cap`,
    );
    nothingInstalled(stateDir);

    const fat = writePlugin(join(tempDir(), 'fat'), {
      manifest: MANIFEST('fat'),
      code: 'export default { register() {} };',
      files: { 'package.json': JSON.stringify({ name: 'fat', version: '1.0.0', description: 'x'.repeat(300 * 1024) }) },
    });
    const refused = await claw(['plugins', 'install', fat], env);
    expect(refused.code).toBe(1);
    expect(lastLine(refused.stderr)).toBe(
      "claw: the plugin's package.json is over the 256 KiB cap for package metadata",
    );
    nothingInstalled(stateDir);
  });
});
