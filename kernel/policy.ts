/**
 * The rules the kernel enforces, handed in by whoever boots it. The kernel owns where each
 * applies and that nothing goes around it: every log line, tool result and frame is masked;
 * every tool call is checked against the tool policy, routed to a sandbox and approved (or refused).
 * What the rules say is the host's (`clawPolicy`, host/policy.ts), so they can grow without
 * the kernel growing, and a test can boot the kernel with rules of its own.
 */
import type { Env } from './config/paths.js';
import type { PluginOrigin, SlotName } from './config/keys.js';
import type { KernelConfig, PluginManifest, PluginsConfig } from './generated/types.js';
import type { Redactor } from './log.js';
import type { CapabilityLookup, ToolContext, ToolDefinition, ToolSandbox } from './plugin-host/capabilities.js';

/** Who is calling a tool and with which model; everything else comes from config. */
export interface ToolSubject {
  agentId?: string;
  /** Full model ref, "provider/model". */
  model?: string;
  /** A sub-agent session's key narrows the set by its spawn depth. */
  sessionKey?: string;
}

/** A call at the tool choke point, as the policy's sandbox and approval steps see it. */
export interface PolicyToolCall {
  tool: ToolDefinition;
  /** Checked against the tool's schema; approval sees them after every rewrite. */
  params: Record<string, unknown>;
  /** For approval, with `sandbox` set when the call runs in one. */
  context: ToolContext;
  capabilities: Pick<CapabilityLookup, 'find' | 'slot'>;
  config: KernelConfig;
  paths: { stateDir: string; workspaceDir: string };
}

type Issue = { level: string; path: string; message: string };

export interface KernelPolicy {
  /** The one redaction layer, from the resolved config (secret-named keys, patterns) and env. */
  redactor(config: Record<string, unknown>, env: Env): Redactor;
  /** Config problems no schema can see: a pattern that does not compile, an id given twice. */
  configIssues(config: KernelConfig): Array<{ path: string; message: string }>;
  /** Keys the host fills in from others before anything reads the config (OpenClaw's sandbox.backend names the slot). */
  derive?(config: KernelConfig): KernelConfig;
  /** Problems of the keys plugins add to `agents` and `tools` (manifest `configContributions`; known once manifests are read), and keys nobody declares: errors stop the boot as a kernel key's do. */
  contributedConfigIssues(
    config: KernelConfig,
    plugins: ReadonlyArray<{ id: string; enabled: boolean; reason: string; manifest?: PluginManifest }>,
  ): Array<Issue & { level: 'error' | 'warning'; owner: string }>;
  /** An unknown-key error as it should stand (a key another tool documents may be only a warning). */
  tolerate<T extends Issue>(issue: T): T;
  /** Whether a plugin is on, and why: where it was found, the slots it would fill, `plugins.*`. */
  enablement(
    plugin: { id: string; origin: PluginOrigin; slots: readonly SlotName[]; enabledByDefault: boolean },
    plugins: PluginsConfig | undefined,
  ): { enabled: boolean; reason: string };
  /** Which tools `subject` may call (the caller's own restriction can only narrow it). */
  toolPolicy(config: KernelConfig, subject: ToolSubject): (tool: string) => boolean;
  /** Where a tool that `runsInSandbox` runs: the session's sandbox, undefined for the host, or why it is refused. */
  sandbox(call: PolicyToolCall): Promise<ToolSandbox | undefined | string>;
  /** Why this call may not run, asked last (the exact params, knowing where they run); undefined: it may. */
  approve(call: PolicyToolCall): Promise<string | undefined>;
}
