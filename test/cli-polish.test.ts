/**
 * The CLI's manners (issue 30): "did you mean" for mistyped commands and flags (exit 2),
 * progress on stderr for slow steps (a redrawn line on a terminal, plain lines elsewhere),
 * a plugin's version read from its package.json, and WebChat reported as running while
 * the gateway it lives in is up.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { closest } from '../apps/cli/suggest.js';
import { formatSeconds, withProgress, writeAbove } from '../apps/cli/progress.js';
import { claw, EMPTY_SCHEMA, startCliGateway, tempDir, waitFor, writePlugin } from './helpers.js';

const stateEnv = () => ({ OPENCLAW_STATE_DIR: tempDir('claw-polish-') });

describe('did you mean', () => {
  it('picks the closest command or flag, and nothing when none is close', () => {
    expect(closest('instal', ['list', 'install', 'uninstall'])).toBe('install');
    expect(closest('pluigns', ['plugins', 'config'])).toBe('plugins');
    expect(closest('--mesage', ['--message', '--agent'])).toBe('--message');
    expect(closest('ad', ['add', 'list'])).toBe('add');
    expect(closest('stat', ['start', 'status'])).toBe('status');
    expect(closest('--al', ['--at', '--all'])).toBe('--all');
    expect(closest('frobnicate', ['plugins', 'config', 'agents'])).toBeUndefined();
    expect(closest('x', ['y', 'z'])).toBe('y');
    expect(closest('--bogus', ['--enabled', '--verbose'])).toBeUndefined();
  });

  it('suggests built-in commands, subcommands and plugin commands, with exit code 2', async () => {
    const env = stateEnv();
    for (const [args, stderr] of [
      [['plugins', 'instal', 'x'], "claw: Unknown command 'plugins instal'. Did you mean 'plugins install'?\n"],
      [['plugin', 'list'], "claw: Unknown command 'plugin'. Did you mean 'plugins'?\n"],
      [['cofnig', 'get', 'x'], "claw: Unknown command 'cofnig'. Did you mean 'config'?\n"],
      [['sandbox', 'bild'], "claw: Unknown command 'sandbox bild'. Did you mean 'sandbox build'?\n"],
      [['gatway'], "claw: Unknown command 'gatway'. Did you mean 'gateway'?\n"],
      [['frobnicate'], "claw: Unknown command 'frobnicate' (see claw --help)\n"],
      [['agent', '--mesage', 'hi'], "claw: Unknown option '--mesage'. Did you mean '--message'?\n"],
      [['plugins', 'list', '--verbos'], "claw: Unknown option '--verbos'. Did you mean '--verbose'?\n"],
      [['models', 'lst'], "claw: Unknown command 'models lst'. Did you mean 'models list'?\n"],
    ] as const) {
      const result = await claw([...args], env);
      expect(result, args.join(' ')).toMatchObject({ code: 2, stderr, stdout: '' });
    }
    const json = await claw(['plugins', 'instal', '--json'], env);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      error: { message: "Unknown command 'plugins instal'. Did you mean 'plugins install'?" },
    });
  }, 180_000);
});

/** A stream that keeps what is written; `isTTY` as a terminal would have it. */
function capture(tty: boolean) {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream: Object.assign(stream, { isTTY: tty }), text: () => text };
}

describe('progress', () => {
  it('not on a terminal: a line when the step starts taking long and one with the time at the end', async () => {
    const out = capture(false);
    expect(await withProgress(out.stream, 'Building the sandbox image', async () => 'built', { afterMs: 0 })).toBe(
      'built',
    );
    expect(out.text()).toMatch(/^Building the sandbox image …\nBuilding the sandbox image … done in \d+\.\d s\n$/);

    const failed = capture(false);
    await expect(
      withProgress(failed.stream, 'Opening', () => Promise.reject(new Error('no')), { afterMs: 0 }),
    ).rejects.toThrow('no');
    expect(failed.text()).toMatch(/^Opening …\nOpening … failed after \d+\.\d s\n$/);
  });

  it('says nothing for a step that ends before the threshold, and starts talking once it passes it', async () => {
    const quick = capture(false);
    await withProgress(quick.stream, 'Quick', async () => 1);
    expect(quick.text()).toBe('');

    const slow = capture(false);
    let finish!: () => void;
    const step = withProgress(slow.stream, 'Slow', () => new Promise<void>((resolve) => (finish = resolve)), {
      afterMs: 20,
    });
    await waitFor(() => slow.text() === 'Slow …\n', { what: 'the progress line' });
    finish();
    await step;
    expect(slow.text()).toMatch(/^Slow …\nSlow … done in \d+\.\d s\n$/);
  });

  it('on a terminal: one redrawn spinner line that other output goes above, ending with a tick', async () => {
    const tty = capture(true);
    let finish!: () => void;
    const step = withProgress(tty.stream, 'Starting the browser', () => new Promise<void>((r) => (finish = r)), {
      afterMs: 0,
    });
    expect(tty.text()).toMatch(/^\r\x1b\[K⠋ Starting the browser … 0\.0 s$/);
    writeAbove(tty.stream, 'Installing playwright-core…\n');
    expect(tty.text()).toContain('\r\x1b[KInstalling playwright-core…\n\r\x1b[K⠙ Starting the browser …');
    finish();
    await step;
    expect(tty.text()).toMatch(/\r\x1b\[K✓ Starting the browser … done in \d+\.\d s\n$/);
    writeAbove(tty.stream, 'after\n');
    expect(tty.text().endsWith('s\nafter\n')).toBe(true);
  });

  it('counts tenths under ten seconds and whole seconds after', () => {
    expect(formatSeconds(1234)).toBe('1.2 s');
    expect(formatSeconds(29_400)).toBe('29 s');
  });
});

describe('versions and channel status', () => {
  it('plugins list shows the version a plugin keeps only in package.json', async () => {
    const env = stateEnv();
    const dir = join(tempDir('claw-polish-plugins-'), 'pkg-versioned');
    writePlugin(dir, {
      manifest: { id: 'pkg-versioned', configSchema: EMPTY_SCHEMA, description: 'versioned by package.json' },
      code: 'export default { register() {} };',
      files: { 'package.json': JSON.stringify({ name: 'pkg-versioned', version: '4.5.6', type: 'module' }) },
    });
    writeFileSync(
      join(env.OPENCLAW_STATE_DIR, 'openclaw.json'),
      JSON.stringify({ plugins: { load: { paths: [dir] }, entries: { 'pkg-versioned': { enabled: true } } } }),
    );
    const table = await claw(['plugins', 'list'], env);
    // No claw-only manifest field makes it OpenClaw's format, which `plugins list` loads (so: loaded).
    expect(table.stdout).toMatch(/^pkg-versioned\s+loaded\s+config\s+4\.5\.6\s+versioned by package\.json$/m);
    const json = JSON.parse((await claw(['plugins', 'list', '--json'], env)).stdout);
    expect(json.plugins.find((plugin: { id: string }) => plugin.id === 'pkg-versioned')).toMatchObject({
      version: '4.5.6',
    });
  });

  it('channels status: WebChat is configured (by default) and running while the gateway is up', async () => {
    const env = stateEnv();
    const gw = await startCliGateway(env);
    try {
      const status = await claw(['channels', 'status'], env);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(
        /^webchat\s+configured\s+\(plugin channel-webchat\)\n\s+default\s+running, connected/m,
      );
      expect(status.stdout).not.toMatch(/^webchat.*not configured/m);
    } finally {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
  }, 60_000);
});
