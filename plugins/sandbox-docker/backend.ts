/**
 * The Docker backend of the `sandbox` slot. One container per scope key, found again by
 * its labels: `ensure` reuses a container whose config hash matches (starting it if it
 * stopped) and replaces one whose hash differs. Idle and old containers are pruned
 * (OpenClaw's `prune.idleHours` / `prune.maxAgeDays`).
 *
 * Idle time is measured from the last exec this process saw; a container nobody used
 * since the gateway started counts from its creation, so a restart lets stale sandboxes
 * age out rather than keeping them forever.
 */
import { posix } from 'node:path';
import type { RuntimeDeps, SandboxBackend, SandboxInfo, SandboxInstance, SandboxSpec } from '../../sdk/index.js';
import type { BindPolicy, SandboxChecks } from '../../sdk/sandbox/index.js';
import {
  connectDocker,
  daemonAddress,
  describeAddress,
  type ContainerHandle,
  type ContainerSummary,
  type DockerClient,
} from './client.js';
import { containerNameFor, createOptions, DEFAULT_CONTAINER_PREFIX, DEFAULT_IMAGE, LABELS } from './container.js';
import { buildSandboxImage, type BuildImageOptions } from './image.js';
import { DockerProcess, execToEnd } from './process.js';
import { handOverWorkspace } from './user.js';

export const BACKEND_ID = 'docker';
const PRUNE_EVERY_MS = 5 * 60_000;
/** How long dispose waits for killed commands to be reported gone. */
const DISPOSE_WAIT_MS = 5000;

export interface PruneSettings {
  /** Remove a sandbox unused for this long; 0 turns it off (OpenClaw default 24). */
  idleHours: number;
  /** Remove a sandbox older than this; 0 turns it off (OpenClaw default 7). */
  maxAgeDays: number;
}

export interface DockerBackendOptions {
  /** claw's state dir, which no bind may expose. */
  stateDir: string;
  /** The environment DOCKER_HOST is read from. */
  env: Readonly<Record<string, string | undefined>>;
  /** Where dockerode comes from: the host's "runtime-deps" service. */
  deps: RuntimeDeps;
  /** The mount and user checks: the host's "sandbox-checks" service. */
  checks: SandboxChecks;
  containerPrefix?: string;
  /** Image when a spec names none. */
  defaultImage?: string;
  prune?: PruneSettings;
  now?: () => number;
}

function isNotFound(error: unknown): boolean {
  return (error as { statusCode?: number } | null)?.statusCode === 404;
}

function isConflict(error: unknown): boolean {
  return (error as { statusCode?: number } | null)?.statusCode === 409;
}

function unreachable(where: string, error: unknown): string {
  return `the Docker daemon at ${where} is not reachable (${(error as Error).message}); start Docker or set DOCKER_HOST`;
}

function labelFilter(labels: Record<string, string>): string {
  return JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });
}

export class DockerSandboxBackend implements SandboxBackend {
  readonly id = BACKEND_ID;
  private client?: Promise<DockerClient>;
  private readonly lastUsed = new Map<string, number>();
  /** Commands still running, killed on dispose so none outlives the gateway. */
  private readonly live = new Set<DockerProcess>();
  private readonly ensuring = new Map<string, Promise<SandboxInstance>>();
  /** Containers whose workspace this process has handed to their user (see ensureNow). */
  private readonly handedOver = new Set<string>();
  private lastPrune = 0;
  private readonly now: () => number;

  constructor(private readonly options: DockerBackendOptions) {
    this.now = options.now ?? Date.now;
  }

  get defaultImage(): string {
    return this.options.defaultImage ?? DEFAULT_IMAGE;
  }

  /** The shared bind checks, plus the daemon's unix socket wherever DOCKER_HOST puts it. */
  private get bindPolicy(): BindPolicy {
    const address = daemonAddress(this.options.env);
    return {
      stateDir: this.options.stateDir,
      protectedPaths: 'socketPath' in address ? [posix.normalize(address.socketPath)] : [],
    };
  }

  docker(): Promise<DockerClient> {
    this.client ??= connectDocker(this.options.env, this.options.deps).catch((error: unknown) => {
      this.client = undefined;
      throw error;
    });
    return this.client;
  }

  async check(): Promise<{ ok: true } | { ok: false; reason: string }> {
    let docker: DockerClient;
    try {
      docker = await this.docker();
    } catch (error) {
      return { ok: false, reason: `the Docker client library is not available: ${(error as Error).message}` };
    }
    const where = describeAddress(daemonAddress(this.options.env));
    try {
      await docker.ping();
    } catch (error) {
      return { ok: false, reason: unreachable(where, error) };
    }
    try {
      await docker.getImage(this.defaultImage).inspect();
    } catch (error) {
      if (!isNotFound(error))
        return { ok: false, reason: `cannot inspect image ${this.defaultImage}: ${(error as Error).message}` };
      return {
        ok: false,
        reason: `the sandbox image ${this.defaultImage} is missing on ${where}; build it with \`claw sandbox build\` (or scripts/build-sandbox-image.sh)`,
      };
    }
    return { ok: true };
  }

  /** Builds the default image (or `options.image`) from busybox-static; returns its name. */
  async buildImage(options: BuildImageOptions = {}): Promise<string> {
    const docker = await this.docker();
    try {
      await docker.ping();
    } catch (error) {
      throw new Error(unreachable(describeAddress(daemonAddress(this.options.env)), error));
    }
    return buildSandboxImage(docker, { image: this.defaultImage, ...options });
  }

  ensure(spec: SandboxSpec): Promise<SandboxInstance> {
    // One create per scope key at a time: two tool calls racing must share one container.
    const running = this.ensuring.get(spec.scopeKey);
    const next = (running ?? Promise.resolve()).catch(() => {}).then(() => this.ensureNow(spec));
    const tracked = next.finally(() => {
      if (this.ensuring.get(spec.scopeKey) === tracked) this.ensuring.delete(spec.scopeKey);
    });
    this.ensuring.set(spec.scopeKey, tracked);
    return tracked;
  }

  /** The create options `ensure` would use: every check it makes, nothing created (explain uses it). */
  private plan(spec: SandboxSpec): { image: string; create: Record<string, unknown> } {
    const image = spec.image ?? this.defaultImage;
    const name = containerNameFor(spec.scopeKey, this.prefix);
    const settings = { name, image, checks: this.options.checks, bindPolicy: this.bindPolicy, now: this.now() };
    return { image, create: createOptions(spec, settings) };
  }

  validate(spec: SandboxSpec): void {
    this.plan(spec);
  }

  /**
   * Makes the workspace writable for the container's user, once per container and gateway
   * process (root only: see handOverWorkspace). Files the gateway itself writes there later
   * (file tools running as root) stay root's until the next hand-over.
   */
  private async handOver(spec: SandboxSpec, containerId: string, user: string): Promise<void> {
    if (spec.workspaceAccess === 'ro' || this.handedOver.has(containerId)) return;
    const { checks } = this.options;
    await handOverWorkspace(checks.workspace(spec.workspaceRoot, this.bindPolicy), checks.user(user));
    this.handedOver.add(containerId);
  }

  private async ensureNow(spec: SandboxSpec): Promise<SandboxInstance> {
    const docker = await this.docker();
    await this.pruneIfDue();
    // Checked before anything is removed: a refused spec leaves a working sandbox alone.
    const { image, create } = this.plan(spec);
    const user = (create.Labels as Record<string, string>)[LABELS.user]!;
    for (const found of await this.find(docker, { [LABELS.scopeKey]: spec.scopeKey })) {
      // A container from before docker.user existed runs as root: it is replaced, never reused.
      if (
        found.Labels[LABELS.configHash] === spec.configHash &&
        found.Image === image &&
        found.Labels[LABELS.user] === user
      ) {
        const container = docker.getContainer(found.Id);
        try {
          if (found.State !== 'running') await container.start();
          await this.handOver(spec, found.Id, user);
          return this.instance(docker, container, spec);
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
      }
      await this.removeQuietly(docker, found.Id);
    }
    let container: ContainerHandle;
    try {
      container = await docker.createContainer(create);
    } catch (error) {
      if (isNotFound(error))
        throw new Error(
          `the sandbox image ${image} is missing; build it with \`claw sandbox build\` (or scripts/build-sandbox-image.sh)`,
        );
      // Another claw process created it between our list and create: use theirs if it fits.
      if (isConflict(error)) {
        const fits = { [LABELS.scopeKey]: spec.scopeKey, [LABELS.configHash]: spec.configHash, [LABELS.user]: user };
        const [other] = await this.find(docker, fits);
        if (other) {
          await this.handOver(spec, other.Id, user);
          return this.instance(docker, docker.getContainer(other.Id), spec);
        }
      }
      throw error;
    }
    try {
      await this.handOver(spec, container.id, user);
      await container.start();
    } catch (error) {
      await this.removeQuietly(docker, container.id);
      throw error;
    }
    return this.instance(docker, container, spec);
  }

  private instance(docker: DockerClient, container: ContainerHandle, spec: SandboxSpec): SandboxInstance {
    const touch = (): void => void this.lastUsed.set(container.id, this.now());
    touch();
    const resolveCwd = (cwd: string | undefined): string => {
      const workdir = posix.normalize(spec.workdir);
      const target = cwd === undefined ? workdir : posix.resolve(workdir, cwd);
      if (target !== workdir && !target.startsWith(`${workdir.replace(/\/$/, '')}/`)) {
        throw new Error(`cwd "${cwd}" is outside the sandbox workdir ${workdir}`);
      }
      return target;
    };
    const start = (argv: string[], cwd: string | undefined, env: Record<string, string> | undefined): DockerProcess => {
      touch();
      const process = new DockerProcess({ docker, container }, { argv, cwd: resolveCwd(cwd), env: env ?? {} });
      this.live.add(process);
      void process.exited.finally(() => this.live.delete(process));
      return process;
    };
    return {
      id: container.id,
      backend: BACKEND_ID,
      spec,
      spawn: (request) => start(['sh', '-c', request.command], request.cwd, request.env),
      exec: async (request) => {
        if (request.command.length === 0) throw new Error('exec needs a command');
        return execToEnd(start(request.command, request.cwd, request.env), request);
      },
    };
  }

  /** claw's containers under this backend's name prefix (the prefix is its namespace). */
  private async find(docker: DockerClient, labels: Record<string, string>): Promise<ContainerSummary[]> {
    const found = await docker.listContainers({
      all: true,
      filters: labelFilter({ [LABELS.sandbox]: '1', ...labels }),
    });
    return found.filter((container) => container.Names.some((name) => name.replace(/^\//, '').startsWith(this.prefix)));
  }

  /** Names of this backend's containers start with it (OpenClaw's docker.containerPrefix). */
  get prefix(): string {
    return this.options.containerPrefix ?? DEFAULT_CONTAINER_PREFIX;
  }

  private async removeQuietly(docker: DockerClient, id: string): Promise<void> {
    try {
      await docker.getContainer(id).remove({ force: true });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.lastUsed.delete(id);
    this.handedOver.delete(id);
  }

  async list(): Promise<SandboxInfo[]> {
    const docker = await this.docker();
    return (await this.find(docker, {})).map((found) => {
      const createdAt = Number(found.Labels[LABELS.createdAt]) || found.Created * 1000;
      return {
        id: found.Id,
        backend: BACKEND_ID,
        scopeKey: found.Labels[LABELS.scopeKey] ?? '',
        agentId: found.Labels[LABELS.agentId] ?? '',
        image: found.Image,
        running: found.State === 'running',
        createdAt,
        lastUsedAt: this.lastUsed.get(found.Id),
        configHash: found.Labels[LABELS.configHash],
      };
    });
  }

  /** Removes a sandbox by container id (or name); an unknown id is an error naming it. */
  async remove(id: string): Promise<void> {
    const docker = await this.docker();
    const container = docker.getContainer(id);
    let found: Awaited<ReturnType<ContainerHandle['inspect']>>;
    try {
      found = await container.inspect();
    } catch (error) {
      if (isNotFound(error)) throw new Error(`no sandbox container "${id}"`);
      throw error;
    }
    // Never remove a container claw did not create.
    if (found.Config.Labels?.[LABELS.sandbox] !== '1') throw new Error(`container "${id}" is not a claw sandbox`);
    await this.removeQuietly(docker, found.Id);
  }

  /** Removes sandboxes idle longer than idleHours or older than maxAgeDays; returns their ids. */
  async prune(): Promise<string[]> {
    const settings = this.options.prune;
    this.lastPrune = this.now();
    if (!settings || (settings.idleHours <= 0 && settings.maxAgeDays <= 0)) return [];
    const now = this.now();
    const removed: string[] = [];
    const docker = await this.docker();
    for (const info of await this.list()) {
      const created = info.createdAt ?? now;
      const idleMs = now - (info.lastUsedAt ?? created);
      const tooIdle = settings.idleHours > 0 && idleMs > settings.idleHours * 3_600_000;
      const tooOld = settings.maxAgeDays > 0 && now - created > settings.maxAgeDays * 86_400_000;
      if (tooIdle || tooOld) {
        await this.removeQuietly(docker, info.id);
        removed.push(info.id);
      }
    }
    return removed;
  }

  private async pruneIfDue(): Promise<void> {
    if (this.now() - this.lastPrune < PRUNE_EVERY_MS) return;
    await this.prune();
  }

  /**
   * Kills every command this backend started that is still running (its whole process
   * group), like tools-exec does on the host when the gateway stops. Containers stay, to
   * be reused or pruned.
   */
  async dispose(): Promise<void> {
    const running = [...this.live];
    for (const process of running) process.kill('SIGKILL');
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, DISPOSE_WAIT_MS).unref());
    await Promise.race([Promise.all(running.map((process) => process.exited)), timeout]);
    this.client = undefined;
  }
}
