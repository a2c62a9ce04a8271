/**
 * Sandbox routing as claw's policy says it. `resolveSandboxRoute` is pure: from config and who
 * is calling it says whether the session is sandboxed and with which spec. The tool choke
 * point's step before approval (KernelPolicy.sandbox, `sandboxStep`) routes every call with
 * it: a tool that runs commands or touches files (`runsInSandbox`) gets the session's sandbox
 * on its context, or the call is refused. `claw sandbox explain` and the plugins that ask
 * where a session runs (the host's "sandbox-route" service) use the same function, so an
 * explanation cannot disagree with where commands actually run.
 */
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DEFAULT_SLOT_HOLDERS,
  expandHome,
  type KernelConfig,
  type KernelPolicy,
  type ToolSandbox,
} from '../kernel/index.js';
import type { SandboxCall, SandboxRoute, SandboxRouter, SandboxSettings } from '../sdk/sandbox/index.js';

type AnyRecord = Record<string, any>;

/** Where a call runs: `spec` is set when the session is sandboxed, and is what the backend ensures. */
export interface SandboxDecision {
  /** Why the session is (or is not) sandboxed, in words. */
  reason: string;
  /** Which plugin holds the sandbox slot ("none" when nobody does). */
  backend: string;
  spec?: { workspaceAccess: 'none' | 'ro' | 'rw'; workspaceRoot: string };
}

/**
 * The sandbox for a call, from `route`. A string is the reason the call is refused: the session
 * must be sandboxed and no backend can provide one, so nothing runs on the host instead.
 */
export function sandboxStep(
  route: (config: KernelConfig, call: SandboxCall) => SandboxDecision,
): KernelPolicy['sandbox'] {
  return async ({ tool, context, capabilities, config, paths }) => {
    const decision = route(config, {
      ...context,
      workspaceDir: context.workspaceDir ?? paths.workspaceDir,
      stateDir: paths.stateDir,
    });
    if (!decision.spec) return undefined;
    const refuse = (why: string) =>
      `Tool "${tool.name}" needs a sandbox (${decision.reason}) but ${why}; nothing was run on the host.`;
    if (decision.backend === 'none')
      return refuse(
        'no sandbox backend is configured (plugins.slots.sandbox is "none"; set it to "sandbox-docker" or "sandbox-bwrap")',
      );
    try {
      const backend = await capabilities.slot('sandbox');
      if (!backend) return refuse(`the sandbox backend "${decision.backend}" is not available`);
      const check = (await backend.check()) as { ok: boolean; reason?: string };
      if (!check.ok) return refuse(`the sandbox backend "${decision.backend}" cannot run here: ${check.reason}`);
      const { workspaceAccess, workspaceRoot } = decision.spec;
      if (workspaceAccess === 'none') await mkdir(workspaceRoot, { recursive: true, mode: 0o700 });
      return (await backend.ensure(decision.spec)) as ToolSandbox;
    } catch (error) {
      return refuse(`the sandbox backend "${decision.backend}" failed: ${(error as Error).message}`);
    }
  };
}

export const SANDBOX_WORKDIR = '/workspace';

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** Docker-style sizes ("512m", "1g") or plain bytes. */
export function parseMemory(value: string | number | undefined): number | undefined {
  if (value === undefined || typeof value === 'number') return value;
  const match = /^(\d+(?:\.\d+)?)\s*([bkmg]?)b?$/i.exec(value.trim());
  if (!match) throw new Error(`sandbox docker.memory "${value}" is not a size like 512m or 1g`);
  return Math.round(Number(match[1]) * UNITS[match[2]!.toLowerCase()]!);
}

function defaultAgentOf(config: KernelConfig): string {
  const list = ((config.agents as AnyRecord | undefined)?.list ?? []) as AnyRecord[];
  return String(list.find((agent) => agent.default)?.id ?? list[0]?.id ?? 'main');
}

/** The settings with `docker`, which only the route's spec is built from. */
export interface HostSandboxSettings extends SandboxSettings {
  docker: {
    image?: string;
    network: string;
    binds: string[];
    env: Record<string, string>;
    memory?: string | number;
    pidsLimit?: number;
    cpus?: number;
    readOnlyRoot: boolean;
    /** "uid" or "uid:gid" (Docker backend); unset: the workspace owner, never root. */
    user?: string;
  };
}

/** `agents.defaults.sandbox` with the agent's `agents.list[].sandbox` on top (docker merged key by key). */
export function sandboxSettings(config: KernelConfig, agentId: string, stateDir: string): HostSandboxSettings {
  const agents = (config.agents ?? {}) as AnyRecord;
  const base = (agents.defaults?.sandbox ?? {}) as AnyRecord;
  const own = (((agents.list ?? []) as AnyRecord[]).find((agent) => agent.id === agentId)?.sandbox ?? {}) as AnyRecord;
  const scope = own.scope ?? base.scope ?? 'agent';
  // OpenClaw: per-agent docker settings do not apply to the one shared sandbox.
  const docker = { ...(base.docker ?? {}), ...(scope === 'shared' ? {} : (own.docker ?? {})) } as AnyRecord;
  return {
    mode: own.mode ?? base.mode ?? 'off',
    scope,
    workspaceAccess: own.workspaceAccess ?? base.workspaceAccess ?? 'none',
    workspaceRoot: expandHome(String(own.workspaceRoot ?? base.workspaceRoot ?? join(stateDir, 'sandboxes'))),
    docker: {
      image: docker.image,
      network: docker.network ?? 'none',
      binds: docker.binds ?? [],
      env: docker.env ?? {},
      memory: docker.memory,
      pidsLimit: docker.pidsLimit,
      cpus: docker.cpus,
      readOnlyRoot: docker.readOnlyRoot !== false,
      ...(docker.user !== undefined ? { user: String(docker.user) } : {}),
    },
  };
}

/** A scope key as a directory name: readable, and distinct keys never collide. */
function slug(key: string): string {
  const readable = key
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .slice(0, 48);
  return `${readable}-${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
}

export function resolveSandboxRoute(config: KernelConfig, input: SandboxCall): SandboxRoute {
  const agentId = input.agentId ?? defaultAgentOf(config);
  const session = (config as AnyRecord).session ?? {};
  const mainKey = String(session.mainKey ?? 'main').toLowerCase();
  const mainSessionKey = session.scope === 'global' ? 'global' : `agent:${agentId.toLowerCase()}:${mainKey}`;
  // A call without a session is never the main session: unknown callers get the stricter answer.
  const sessionKey = input.sessionKey ?? '';
  const settings = sandboxSettings(config, agentId, input.stateDir);
  const backend = String(config.plugins?.slots?.sandbox ?? DEFAULT_SLOT_HOLDERS.sandbox);
  const isMain = sessionKey.toLowerCase() === mainSessionKey;
  const sandboxed = settings.mode === 'all' || (settings.mode === 'non-main' && !isMain);
  const reason =
    settings.mode === 'off'
      ? 'sandbox mode is "off"'
      : settings.mode === 'all'
        ? 'sandbox mode is "all": every session is sandboxed'
        : isMain
          ? `sandbox mode is "non-main" and ${sessionKey} is the agent's main session`
          : `sandbox mode is "non-main" and ${sessionKey || 'a call without a session'} is not the main session (${mainSessionKey})`;
  const route: SandboxRoute = { agentId, sessionKey, mainSessionKey, settings, sandboxed, reason, backend };
  if (!sandboxed) return route;
  const scopeKey =
    settings.scope === 'shared'
      ? 'shared'
      : settings.scope === 'agent'
        ? `agent:${agentId}`
        : sessionKey || `agent:${agentId}:unkeyed`;
  const { docker } = settings;
  const shape = {
    workspaceRoot:
      settings.workspaceAccess === 'none' ? join(settings.workspaceRoot, slug(scopeKey)) : input.workspaceDir,
    workspaceAccess: settings.workspaceAccess,
    workdir: SANDBOX_WORKDIR,
    ...(docker.image ? { image: docker.image } : {}),
    network: docker.network,
    binds: docker.binds,
    env: docker.env,
    limits: { memoryBytes: parseMemory(docker.memory), pids: docker.pidsLimit, cpus: docker.cpus },
    readOnlyRoot: docker.readOnlyRoot,
    // Part of the hash: a changed user recreates the container.
    ...(docker.user !== undefined ? { user: docker.user } : {}),
  };
  const configHash = createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 16);
  route.spec = { scopeKey, scope: settings.scope, agentId, sessionKey, ...shape, configHash };
  return route;
}

/** The host's "sandbox-route" service. */
export const sandboxRouteService: SandboxRouter = { route: resolveSandboxRoute };
