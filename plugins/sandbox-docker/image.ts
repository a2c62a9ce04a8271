/**
 * Builds claw's default sandbox image without any image registry: a root filesystem made
 * of this machine's statically linked busybox (a shell and the usual coreutils, one binary
 * with a link per applet), imported as a single-layer image. Debian/Ubuntu:
 * `apt-get install busybox-static`.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  copyFileSync,
  chmodSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DockerClient } from './client.js';
import { DEFAULT_IMAGE } from './container.js';

/** Where busybox-static puts its binary; the dynamic busybox would need host libraries. */
export const BUSYBOX_CANDIDATES = ['/bin/busybox', '/usr/bin/busybox'];

export interface BuildImageOptions {
  /** "repo:tag" (default claw-sandbox:busybox). */
  image?: string;
  /** A statically linked busybox binary (default: the first of BUSYBOX_CANDIDATES). */
  busybox?: string;
}

function isStatic(path: string): boolean {
  // An ELF with a PT_INTERP segment needs a dynamic loader; a static one has none.
  const elf = readFileSync(path);
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2) return false;
  const phoff = Number(elf.readBigUInt64LE(0x20));
  const phentsize = elf.readUInt16LE(0x36);
  const phnum = elf.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) if (elf.readUInt32LE(phoff + i * phentsize) === 3) return false;
  return true;
}

function findBusybox(explicit?: string): string {
  const candidates = explicit ? [explicit] : BUSYBOX_CANDIDATES;
  const found = candidates.find((path) => existsSync(path));
  if (!found)
    throw new Error(
      `no busybox binary at ${candidates.join(' or ')}; install a static one (apt-get install busybox-static)`,
    );
  if (!isStatic(found)) throw new Error(`${found} is not a statically linked 64-bit busybox; install busybox-static`);
  return found;
}

function applets(busybox: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(busybox, ['--list'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out.split('\n').filter(Boolean))
        : reject(new Error(`${busybox} --list exited with ${code}`)),
    );
  });
}

/** Lays out the root filesystem: /bin/busybox, a link per applet, the usual empty dirs. */
async function layoutRootfs(root: string, busybox: string): Promise<void> {
  for (const dir of ['bin', 'etc', 'tmp', 'var/tmp', 'run', 'workspace', 'proc', 'sys', 'dev', 'root'])
    mkdirSync(join(root, dir), { recursive: true });
  chmodSync(join(root, 'tmp'), 0o1777);
  copyFileSync(busybox, join(root, 'bin', 'busybox'));
  chmodSync(join(root, 'bin', 'busybox'), 0o755);
  for (const applet of await applets(busybox)) {
    if (applet !== 'busybox' && !existsSync(join(root, 'bin', applet)))
      symlinkSync('busybox', join(root, 'bin', applet));
  }
  writeFileSync(
    join(root, 'etc', 'passwd'),
    'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n',
  );
  writeFileSync(join(root, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
}

/** Builds and imports the image; returns its name. */
export async function buildSandboxImage(docker: DockerClient, options: BuildImageOptions = {}): Promise<string> {
  const image = options.image ?? DEFAULT_IMAGE;
  const match = /^([a-z0-9][a-z0-9._/-]*):([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$/.exec(image);
  if (!match) throw new Error(`image name "${image}" must be "repo:tag" (lower-case repo)`);
  const busybox = findBusybox(options.busybox);
  const root = mkdtempSync(join(tmpdir(), 'claw-sandbox-rootfs-'));
  try {
    await layoutRootfs(root, busybox);
    // `tar` is everywhere claw runs Docker; it keeps modes and links exactly.
    const tar = spawn('tar', ['-C', root, '--numeric-owner', '--owner=0', '--group=0', '-c', '.'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tarError = '';
    tar.stderr.on('data', (chunk: Buffer) => (tarError += chunk.toString()));
    const tarDone = new Promise<void>((resolve, reject) => {
      tar.on('error', reject);
      tar.on('close', (code) =>
        code === 0 ? resolve() : reject(new Error(`tar failed: ${tarError.trim() || `exit ${code}`}`)),
      );
    });
    const progress = await docker.importImage(tar.stdout, {
      repo: match[1]!,
      tag: match[2]!,
      changes: ['CMD ["sh"]', 'WORKDIR /workspace', 'ENV PATH=/bin'],
    });
    const output = await new Promise<unknown[]>((resolve, reject) =>
      docker.modem.followProgress(progress, (error, result) => (error ? reject(error) : resolve(result))),
    );
    await tarDone;
    const failed = output.find((item) => (item as { error?: string }).error);
    if (failed) throw new Error(`docker import failed: ${(failed as { error: string }).error}`);
    await docker.getImage(image).inspect();
    return image;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
