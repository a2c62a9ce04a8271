/** Shared helpers: temporary directories, plugin folders written on the fly, and running the built CLI. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import JSON5 from 'json5';
import { DEFAULT_SLOT_HOLDERS } from '../kernel/config/keys.js';
import type { ChannelPlugin, InboundMessage, InboundOutcome, KernelServices } from '../sdk/index.js';
import { useService } from '../sdk/services.js';
import { afterAll, afterEach } from 'vitest';
import { spawnCliGateway, type CliGateway } from './cli-gateway.js';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(REPO, 'dist', 'apps', 'cli', 'bin.cjs');

const made: string[] = [];
afterAll(() => {
  // Retries: a child (Chromium, a gateway) stopped a moment ago may still be writing its last files.
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** A fresh temporary directory, removed after the test file finishes. */
export function tempDir(prefix = 'claw-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export interface PluginFiles {
  manifest: Record<string, unknown> | string;
  /** Entry module source; written to `entryFile`. */
  code?: string;
  entryFile?: string;
  files?: Record<string, string>;
}

/** Write a plugin folder; `manifest` may be an object or raw text (for broken-manifest tests). */
export function writePlugin(dir: string, plugin: PluginFiles): string {
  mkdirSync(dir, { recursive: true });
  const manifest = typeof plugin.manifest === 'string' ? plugin.manifest : JSON.stringify(plugin.manifest, null, 2);
  writeFileSync(join(dir, 'openclaw.plugin.json'), manifest);
  if (plugin.code !== undefined) {
    const entry = join(dir, plugin.entryFile ?? 'index.js');
    mkdirSync(dirname(entry), { recursive: true });
    writeFileSync(entry, plugin.code);
  }
  for (const [name, content] of Object.entries(plugin.files ?? {})) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return dir;
}

export const EMPTY_SCHEMA = { type: 'object', additionalProperties: false, properties: {} };

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the built `claw` with an isolated state dir. */
export function claw(args: string[], env: Record<string, string | undefined> = {}, cwd = REPO): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** A port nothing listens on (for "unreachable" tests), or to start something on. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A pause for code under test that must take time (a slow fake, a task that holds a lane).
 * Not for tests to wait with: a test waits for a signal (`waitFor`), never for a duration.
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface WaitForOptions {
  /** Give up after this long (default 10 s: generous, since a passing wait returns as soon as it can). */
  timeoutMs?: number;
  /** How often to look (default 10 ms). */
  intervalMs?: number;
  /** What is awaited, for the timeout message ("the reply", "the log line ..."). */
  what?: string;
}

/**
 * Polls `condition` until it returns something truthy and resolves with that value; rejects
 * naming `what` after the deadline. A condition that throws counts as "not yet" (a file not
 * written yet, a JSON line half written); the last error is in the timeout message.
 *
 *   await waitFor(() => fake.requests.length > 0, { what: 'the model request' });
 *   const line = await waitFor(() => log().match(/listening on (\d+)/), { what: 'the port' });
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<NonNullable<T>> {
  const { timeoutMs = 10_000, intervalMs = 10, what = 'a condition' } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as NonNullable<T>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const why = lastError === undefined ? '' : ` (last error: ${(lastError as Error)?.message ?? String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export interface InboundDecision {
  channel: string;
  messageId?: string;
  peer: string;
  status: InboundOutcome['status'];
}

/**
 * Records what the inbound pipeline decided for every message a channel hands it (dispatched,
 * history, blocked, pairing, duplicate), by wrapping the "channels" service's `receive`.
 * Accounts call `receive` through the service object at call time, so wrapping it after boot
 * sees every later message. A test that expects nothing to happen waits for the decision
 * first (`waitFor(() => decided(...))`), so "nothing was sent" is never just "nothing yet".
 */
export async function recordInboundDecisions(kernel: Pick<KernelServices, 'capabilities'>): Promise<InboundDecision[]> {
  const channels = await useService<{ receive(channel: string, message: InboundMessage): Promise<InboundOutcome> }>(
    kernel,
    'channels',
  );
  if (!channels) throw new Error('no "channels" service to record decisions from');
  const decisions: InboundDecision[] = [];
  const receive = channels.receive.bind(channels);
  channels.receive = async (channel, message) => {
    const outcome = await receive(channel, message);
    decisions.push({
      channel,
      ...(message.messageId ? { messageId: message.messageId } : {}),
      peer: message.peer.id,
      status: outcome.status,
    });
    return outcome;
  };
  return decisions;
}

/**
 * Records every reply run a channel finished: the pipeline tells the channel's observer
 * (`replyStarted(...).done(status)`) once a run is over, and the channel then tidies up (closes
 * its draft, deletes stale previews, takes the ack reaction back). Wrapping the channel
 * capability's `replyStarted` after boot sees every later run; `finished` gets the run's status
 * once the channel's own `done` has settled, so "nothing more was sent" can wait for it. A run
 * the channel does not observe (no observer returned) has nothing to tidy and counts as
 * finished at once.
 */
export async function recordReplyRuns(
  kernel: { plugins: object },
  channelId: string,
): Promise<{ started: number; finished: string[] }> {
  // The channel as registered: what `capabilities.find` returns outside the channels plugin is
  // a view (a copy whose send takes the outbound path), and patching a copy observes nothing.
  const registered = (kernel.plugins as unknown as { capabilities: Pick<KernelServices['capabilities'], 'find'> })
    .capabilities;
  const channel = (await registered.find('channel', channelId)) as ChannelPlugin | undefined;
  if (!channel?.replyStarted) throw new Error(`channel "${channelId}" has no replyStarted to record runs from`);
  const runs = { started: 0, finished: [] as string[] };
  const replyStarted = channel.replyStarted.bind(channel);
  channel.replyStarted = (message, ack) => {
    runs.started++;
    const observer = replyStarted(message, ack);
    if (!observer) {
      runs.finished.push('untracked');
      return observer;
    }
    return {
      ...observer,
      done: async (status) => {
        try {
          await observer.done(status);
        } finally {
          runs.finished.push(status);
        }
      },
    };
  };
  return runs;
}

/** The bundled plugins (from their manifests): ids in order, whether they are on by default, their slots. */
export function bundledPlugins(): Array<{ id: string; enabledByDefault: boolean; kind: string[] }> {
  const root = join(REPO, 'plugins');
  return readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'openclaw.plugin.json')))
    .map(
      (name) =>
        JSON5.parse(readFileSync(join(root, name, 'openclaw.plugin.json'), 'utf8')) as {
          id: string;
          enabledByDefault?: boolean;
          kind?: string | string[];
        },
    )
    .map((manifest) => ({
      id: manifest.id,
      enabledByDefault: manifest.enabledByDefault === true,
      kind: manifest.kind === undefined ? [] : ([] as string[]).concat(manifest.kind),
    }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

/** Whether a bundled plugin loads without any config: on by default, and holding its slots. */
export function onByDefault(plugin: { id: string; enabledByDefault: boolean; kind: string[] }): boolean {
  return (
    plugin.enabledByDefault &&
    plugin.kind.every((slot) => DEFAULT_SLOT_HOLDERS[slot as keyof typeof DEFAULT_SLOT_HOLDERS] === plugin.id)
  );
}

export type { CliGateway };

const gatewayChildren: ChildProcess[] = [];
afterEach(() => {
  for (const child of gatewayChildren.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Start `claw gateway` (built CLI) and wait for its "listening" log line; killed after each test. */
export function startCliGateway(env: Record<string, string>, args: string[] = []): Promise<CliGateway> {
  return spawnCliGateway(CLI, env, args, (child) => gatewayChildren.push(child));
}

/**
 * Starts `node <args>` and resolves once its stdout contains `marker`; rejects if it exits
 * first. `output()` is everything it has printed so far.
 */
export function spawnUntil(args: string[], marker: string): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes(marker)) resolve({ child, output: () => stdout });
    });
    child.on('exit', (code) =>
      reject(new Error(`${args.join(' ')} exited (${code}) before printing "${marker}": ${stdout} ${stderr}`)),
    );
  });
}

/** A real media file made by ffmpeg from a lavfi source ("color=c=red:s=16x16", "sine=…"): its bytes. */
export function lavfiFile(source: string, out: string, ...options: string[]): Buffer {
  execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', source, ...options, out]);
  return readFileSync(out);
}
