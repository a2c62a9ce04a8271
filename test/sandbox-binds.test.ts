import { chownSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkWorkspaceRoot, validateBind } from '../host/sandbox-checks.js';
import { tempDir } from './helpers.js';

const policy = { stateDir: '/home/u/.openclaw', home: '/home/u', protectedPaths: ['/srv/engine/api.sock'] };

/** A directory an unprivileged user owns (the tests may run as root, whose temp dirs root owns). */
function userOwnedDir(): string {
  const dir = tempDir('claw-bind-data-');
  if (process.getuid?.() === 0) chownSync(dir, 1000, 1000);
  return dir;
}

describe('sandbox bind validation (shared by every backend)', () => {
  it.each([
    ['/:/host', /host root/],
    ['etc:/x', /must be absolute/],
    ['/etc/passwd:/x', /\/etc is a protected host path/],
    ['/var/run/docker.sock:/var/run/docker.sock', /protected host path/],
    ['/run/docker.sock:/d.sock', /protected host path/],
    ['/proc:/p', /\/proc is a protected host path/],
    ['/sys/kernel:/k', /\/sys is a protected host path/],
    ['/dev:/d', /protected/],
    ['/home/u/../../etc:/x', /\/etc is a protected host path/],
    ['//etc//:/x', /\/etc is a protected host path/],
    ['/var:/v', /contains the protected host path \/var\/run/],
    ['/home/u/.openclaw/credentials:/c', /claw state dir/],
    ['/home/u:/h', /home directory \/home\/u as a whole/],
    ['/home:/h', /home directory/],
    ['/home/u/.ssh:/s:ro', /holds credentials/],
    ['/home/u/project:/proc/x', /reserved inside the sandbox/],
    ['/home/u/project:/x:rx', /not "host:sandbox\[:ro\|rw\]"/],
    ['/home/u/project', /not "host:sandbox/],
    ['/srv/podman.sock:/p.sock', /container engine socket/],
    ['/var/lib/containerd:/c', /protected host path/],
    ['/srv/engine/api.sock:/a.sock', /\/srv\/engine\/api.sock is a protected host path/],
    ['/srv/engine:/e', /contains the protected host path \/srv\/engine\/api.sock/],
  ])('refuses %s', (bind, reason) => {
    expect(() => validateBind(bind, policy)).toThrow(reason);
  });

  it('accepts an ordinary project directory, read-only or not', () => {
    expect(validateBind('/home/u/project:/project:ro', policy)).toEqual({
      source: '/home/u/project',
      target: '/project',
      readOnly: true,
    });
    const data = userOwnedDir();
    expect(validateBind(`${data}:/data`, policy)).toEqual({ source: data, target: '/data', readOnly: false });
  });

  it('refuses a writable bind of a directory root owns, or of one that is not there; read-only they are fine', () => {
    // Issue 28: "/usr/local/bin:/usr/local/bin" let a sandbox replace programs root runs.
    for (const dir of ['/usr/local/bin', '/opt', '/usr/share']) {
      const refusal = new RegExp(`sandbox bind "${dir}:/x" is refused: ${dir} is owned by root.*read-only`);
      expect(() => validateBind(`${dir}:/x`, policy)).toThrow(refusal);
      expect(() => validateBind(`${dir}:/x:rw`, policy)).toThrow(/is owned by root/);
      expect(validateBind(`${dir}:/x:ro`, policy)).toEqual({ source: dir, target: '/x', readOnly: true });
    }
    // Docker would create the missing directory, owned by root.
    expect(() => validateBind('/srv/nowhere/data:/data', policy)).toThrow(
      /"\/srv\/nowhere\/data:\/data" is refused: \S+ does not exist/,
    );
  });

  it('refuses an innocent-looking path that is a symbolic link to /etc (checked again after resolving)', () => {
    const dir = tempDir();
    symlinkSync('/etc', join(dir, 'config'));
    mkdirSync(join(dir, 'real'));
    expect(() => validateBind(`${dir}/config:/x`, { stateDir: '/nonexistent-state' })).toThrow(/resolves to \/etc/);
    expect(() => validateBind(`${dir}/config/ssl/missing:/x`, { stateDir: '/nonexistent-state' })).toThrow(
      /resolves to \/etc\/ssl\/missing/,
    );
    expect(validateBind(`${dir}/real:/x:ro`, { stateDir: '/nonexistent-state' }).source).toBe(`${dir}/real`);
  });

  it('checks a sandbox workspace against the host paths but lets it live in the state dir or a home', () => {
    expect(checkWorkspaceRoot('/home/u/.openclaw/workspace/', policy)).toBe('/home/u/.openclaw/workspace');
    expect(() => checkWorkspaceRoot('/etc', policy)).toThrow(
      /sandbox workspace "\/etc" is refused: \/etc is a protected host path/,
    );
    expect(() => checkWorkspaceRoot('/srv', policy)).toThrow(
      /contains the protected host path \/srv\/engine\/api.sock/,
    );
    expect(() => checkWorkspaceRoot('work', policy)).toThrow(/must be an absolute host path/);
  });
});
