/**
 * `claw backup create|verify|restore`, `claw reset` and `claw uninstall` on real files: a
 * round trip that must come back byte-identical with the same modes, a tampered archive, and
 * hostile entries (links, "..", absolute paths) that must never be written.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join, relative } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { tarHeader } from '../apps/cli/commands/backup/tar.js';
import { claw, tempDir } from './helpers.js';

const LONG = `${'deeply-nested-folder-name/'.repeat(5)}${'a-file-name-that-is-long'.repeat(3)}.md`;

/** A state dir with what claw keeps there, in the modes claw gives it, plus caches that must be left out. */
function makeState(home: string) {
  const stateDir = join(home, '.openclaw');
  const workspace = join(home, 'ws');
  const files: Record<string, [string | Buffer, number]> = {
    'openclaw.json': [
      JSON.stringify({ agents: { defaults: { workspace } }, gateway: { auth: { token: 'tok-123' } } }),
      0o600,
    ],
    'credentials/whatsapp/default/creds.json': ['{"noise":"key"}', 0o600],
    'agents/main/agent/auth-profiles.json': ['{"profiles":{}}', 0o600],
    'agents/main/sessions/sessions.json': ['{}', 0o600],
    'agents/main/sessions/abc.jsonl': ['{"role":"user"}\n', 0o600],
    'memory/main.sqlite': [Buffer.from([0, 1, 2, 3, 255, 254, 0, 10]), 0o600],
    [LONG]: ['long path', 0o640],
    'logs/gateway.log': ['{"msg":"x"}\n', 0o600],
    'runtime-deps/pkg/index.js': ['cache', 0o644],
    'cache/validators/x.json': ['cache', 0o600],
    'gateway.lock': ['{}', 0o600],
  };
  mkdirSync(stateDir, { mode: 0o700 });
  for (const [path, [content, mode]] of Object.entries(files)) {
    mkdirSync(join(stateDir, path, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(join(stateDir, path), content, { mode });
    chmodSync(join(stateDir, path), mode);
  }
  mkdirSync(join(stateDir, 'empty-folder'), { mode: 0o750 });
  chmodSync(join(stateDir, 'empty-folder'), 0o750);
  mkdirSync(workspace, { mode: 0o755 });
  chmodSync(workspace, 0o755);
  writeFileSync(join(workspace, 'AGENTS.md'), '# agents\n', { mode: 0o644 });
  chmodSync(join(workspace, 'AGENTS.md'), 0o644);
  return { stateDir, workspace };
}

/** Every file and folder below `root`: content hash and mode (what a round trip must keep). */
function snapshot(root: string, leaveOut: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const rel = relative(root, path);
      if (leaveOut.some((prefix) => rel === prefix || rel.startsWith(`${prefix}/`))) continue;
      const stats = lstatSync(path);
      const mode = (stats.mode & 0o777).toString(8);
      if (stats.isDirectory()) {
        out[`${rel}/`] = mode;
        visit(path);
      } else out[rel] = `${mode} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
    }
  };
  out['./'] = (statSync(root).mode & 0o777).toString(8);
  visit(root);
  return out;
}

function archiveIn(dir: string): string {
  const name = readdirSync(dir).find((entry) => entry.endsWith('-openclaw-backup.tar.gz'));
  if (!name) throw new Error(`no archive in ${dir}: ${readdirSync(dir).join(', ')}`);
  return join(dir, name);
}

/** A tar.gz with these raw entries (path, type flag, content), for archives claw must refuse. */
function hostileArchive(
  file: string,
  entries: Array<{ path: string; typeflag: string; data?: string; linkname?: string }>,
) {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.from(entry.data ?? '');
    blocks.push(
      tarHeader(entry.path, {
        typeflag: entry.typeflag,
        size: data.length,
        mode: 0o644,
        mtime: Date.now(),
        linkname: entry.linkname,
      }),
    );
    blocks.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  writeFileSync(file, gzipSync(Buffer.concat(blocks)));
}

describe('claw backup', () => {
  it('backs up, verifies, and restores byte-identical with the same modes after a wipe', async () => {
    const home = tempDir('claw-backup-');
    const { stateDir, workspace } = makeState(home);
    const env = { HOME: home, OPENCLAW_STATE_DIR: stateDir };
    const before = snapshot(stateDir, ['logs', 'runtime-deps', 'cache', 'gateway.lock']);
    const workspaceBefore = snapshot(workspace);
    const out = join(home, 'backups');
    mkdirSync(out);

    const created = await claw(['backup', 'create', '--output', out, '--verify'], env);
    expect(created.code, created.stderr + created.stdout).toBe(0);
    expect(created.stdout).toContain('Verified: every entry matches the manifest.');
    const archive = archiveIn(out);
    expect(statSync(archive).mode & 0o777).toBe(0o600);
    // A standard tar: the system's tar lists it, manifest last, long paths intact, caches left out.
    const listed = spawnSync('tar', ['tzf', archive], { encoding: 'utf8' });
    if (!listed.error) {
      expect(listed.status, listed.stderr).toBe(0);
      const names = listed.stdout.trim().split('\n');
      expect(names.at(-1)).toMatch(/-openclaw-backup\/manifest\.json$/);
      expect(names).toContainEqual(expect.stringMatching(new RegExp(`/payload/state/${LONG}$`)));
      expect(names).toContainEqual(expect.stringMatching(/\/payload\/workspace-1\/AGENTS\.md$/));
      expect(names.some((name) => /\/(logs|runtime-deps|cache)\/|gateway\.lock/.test(name))).toBe(false);
    }
    const verified = await claw(['backup', 'verify', archive, '--json'], env);
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({
      ok: true,
      problems: [],
      assets: [{ kind: 'state' }, { kind: 'workspace' }],
    });

    // Existing files are not replaced without --force.
    const refused = await claw(['backup', 'restore', archive], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/exists?; pass --force/);
    // Nor while a gateway runs for the state dir (this test's own process stands in for it).
    writeFileSync(
      join(stateDir, 'gateway.lock'),
      JSON.stringify({ pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() }),
    );
    const busy = await claw(['backup', 'restore', archive, '--force'], env);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`a gateway is running for ${stateDir} (pid ${process.pid})`);

    rmSync(stateDir, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
    const restored = await claw(['backup', 'restore', archive], env);
    expect(restored.code, restored.stderr).toBe(0);
    expect(snapshot(stateDir)).toEqual(before);
    expect(snapshot(workspace)).toEqual(workspaceBefore);
    // Nothing of the temporary folders is left beside the destinations.
    expect(readdirSync(home).filter((name) => name.includes('.restore-'))).toEqual([]);

    // --force replaces what is there with the archive's files.
    writeFileSync(join(stateDir, 'openclaw.json'), '{"changed":true}');
    writeFileSync(join(stateDir, 'stray.txt'), 'not in the backup');
    const forced = await claw(['backup', 'restore', archive, '--force'], env);
    expect(forced.code, forced.stderr).toBe(0);
    expect(snapshot(stateDir)).toEqual(before);

    // --target: a fresh folder with the archive's payload layout.
    const staging = join(home, 'staging');
    const staged = await claw(['backup', 'restore', archive, '--target', staging], env);
    expect(staged.code, staged.stderr).toBe(0);
    expect(snapshot(join(staging, 'payload', 'state'))).toEqual(before);
  }, 120_000);

  it('fails verification for a tampered archive and restores nothing from it', async () => {
    const home = tempDir('claw-backup-tamper-');
    const { stateDir } = makeState(home);
    const env = { HOME: home, OPENCLAW_STATE_DIR: stateDir };
    const out = join(home, 'backups');
    mkdirSync(out);
    expect((await claw(['backup', 'create', '--output', out, '--no-include-workspace'], env)).code).toBe(0);
    const archive = archiveIn(out);
    const tar = gunzipSync(readFileSync(archive));
    const at = tar.indexOf('{"noise":"key"}');
    expect(at).toBeGreaterThan(0);
    tar[at + 2] = 'N'.charCodeAt(0);
    const tampered = join(home, 'tampered.tar.gz');
    writeFileSync(tampered, gzipSync(tar));
    const verified = await claw(['backup', 'verify', tampered], env);
    expect(verified.code).toBe(1);
    expect(verified.stderr).toContain(
      'payload/state/credentials/whatsapp/default/creds.json: content does not match the manifest',
    );
    const restore = await claw(['backup', 'restore', tampered, '--target', join(home, 'out')], env);
    expect(restore.code).toBe(1);
    expect(restore.stderr).toContain('failed verification, nothing was restored');
    expect(existsSync(join(home, 'out'))).toBe(false);
    // A cut-off archive is named as such.
    const cut = join(home, 'cut.tar.gz');
    writeFileSync(cut, gzipSync(tar.subarray(0, 2048)));
    const short = await claw(['backup', 'verify', cut], env);
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/cut off|ends without/);
  }, 90_000);

  it('refuses symlinks, hard links, ".." and absolute paths, writing nothing', async () => {
    const home = tempDir('claw-backup-hostile-');
    const env = { HOME: home, OPENCLAW_STATE_DIR: join(home, '.openclaw') };
    const manifest = JSON.stringify({
      format: 'claw-backup',
      schemaVersion: 1,
      assets: [
        { id: 'state', kind: 'state', type: 'dir', sourcePath: join(home, 'victim'), archivePath: 'payload/state' },
      ],
      entries: [],
    });
    const cases = [
      {
        entry: { path: 'b/payload/state/link', typeflag: '2', linkname: '/etc/passwd' },
        says: 'is a symbolic link: refused',
      },
      {
        entry: { path: 'b/payload/state/hard', typeflag: '1', linkname: 'b/manifest.json' },
        says: 'is a hard link: refused',
      },
      { entry: { path: 'b/payload/state/../../../escaped', typeflag: '0', data: 'x' }, says: 'climbs out with ".."' },
      { entry: { path: '/tmp/absolute-claw-test', typeflag: '0', data: 'x' }, says: 'is absolute' },
    ];
    for (const [index, { entry, says }] of cases.entries()) {
      const file = join(home, `hostile-${index}.tar.gz`);
      hostileArchive(file, [{ path: 'b/manifest.json', typeflag: '0', data: manifest }, entry]);
      const verified = await claw(['backup', 'verify', file], env);
      expect(verified.code).toBe(1);
      expect(verified.stderr).toContain(says);
      const restored = await claw(['backup', 'restore', file], env);
      expect(restored.code).toBe(1);
      expect(restored.stderr).toContain('nothing was restored');
    }
    expect(existsSync(join(home, 'victim'))).toBe(false);
    expect(existsSync('/tmp/absolute-claw-test')).toBe(false);
    expect(readdirSync(home).sort()).toEqual(cases.map((_, index) => `hostile-${index}.tar.gz`).sort());
  }, 90_000);
});

describe('claw reset and claw uninstall', () => {
  it('reset backs up first, removes what the scope names, and asks for --yes without a terminal', async () => {
    const home = tempDir('claw-reset-');
    const { stateDir, workspace } = makeState(home);
    rmSync(join(stateDir, 'gateway.lock'));
    const env = { HOME: home, OPENCLAW_STATE_DIR: stateDir };
    const noScope = await claw(['reset'], env);
    expect(noScope).toMatchObject({ code: 2, stderr: expect.stringContaining('--scope is required') });
    const unconfirmed = await claw(['reset', '--scope', 'config+creds+sessions'], env);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('Pass --yes to confirm');
    const dry = await claw(['reset', '--scope', 'config+creds+sessions', '--dry-run', '--json'], env);
    expect(JSON.parse(dry.stdout).remove.sort()).toEqual(
      ['openclaw.json', 'credentials', 'agents/main/sessions', 'agents/main/agent/auth-profiles.json']
        .map((path) => join(stateDir, path))
        .sort(),
    );
    expect(existsSync(join(stateDir, 'openclaw.json'))).toBe(true);

    const reset = await claw(['reset', '--scope', 'config+creds+sessions', '--yes', '--json'], { ...env }, home);
    expect(reset.code, reset.stderr).toBe(0);
    const result = JSON.parse(reset.stdout);
    expect(existsSync(join(stateDir, 'credentials'))).toBe(false);
    expect(existsSync(join(stateDir, 'agents/main/sessions'))).toBe(false);
    expect(existsSync(join(stateDir, 'memory/main.sqlite'))).toBe(true);
    expect(existsSync(join(workspace, 'AGENTS.md'))).toBe(true);
    // The backup it took puts it all back.
    expect(result.backup).toMatch(new RegExp(`^${home}/.*-openclaw-backup\\.tar\\.gz$`));
    const back = await claw(['backup', 'restore', result.backup, '--force'], env);
    expect(back.code, back.stderr).toBe(0);
    expect(readFileSync(join(stateDir, 'credentials/whatsapp/default/creds.json'), 'utf8')).toBe('{"noise":"key"}');

    const full = await claw(['reset', '--scope', 'full', '--yes', '--no-backup'], env);
    expect(full.code, full.stderr).toBe(0);
    expect(existsSync(stateDir)).toBe(false);
    expect(existsSync(workspace)).toBe(false);
    expect(full.stdout).toContain('Next: claw onboard');
  }, 120_000);

  it('uninstall --state keeps the workspaces unless --workspace, and refuses while a gateway runs', async () => {
    const home = tempDir('claw-uninstall-');
    const { stateDir, workspace } = makeState(home);
    const env = { HOME: home, OPENCLAW_STATE_DIR: stateDir };
    writeFileSync(
      join(stateDir, 'gateway.lock'),
      JSON.stringify({ pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() }),
    );
    const busy = await claw(['uninstall', '--state', '--yes'], env);
    expect(busy.code).toBe(1);
    expect(busy.stdout).toContain('FAIL state: left in place: a gateway is running');
    expect(existsSync(join(stateDir, 'openclaw.json'))).toBe(true);
    rmSync(join(stateDir, 'gateway.lock'));

    const state = await claw(['uninstall', '--state', '--yes'], env);
    expect(state.code, state.stderr + state.stdout).toBe(0);
    expect(existsSync(stateDir)).toBe(false);
    expect(existsSync(join(workspace, 'AGENTS.md'))).toBe(true);
    // --all: the service (none installed here), the state and the workspaces.
    const other = tempDir('claw-uninstall-all-');
    const second = makeState(other);
    rmSync(join(second.stateDir, 'gateway.lock'));
    const all = await claw(['uninstall', '--all', '--yes', '--json'], {
      HOME: other,
      OPENCLAW_STATE_DIR: second.stateDir,
    });
    expect(all.code, all.stderr + all.stdout).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({
      ok: true,
      outcomes: [
        { scope: 'service', ok: true, message: expect.stringContaining('no gateway service is installed') },
        { scope: 'state', ok: true },
        { scope: 'workspace', ok: true, removed: [second.workspace] },
      ],
    });
    expect(existsSync(second.stateDir)).toBe(false);
    expect(existsSync(second.workspace)).toBe(false);
  }, 90_000);
});
