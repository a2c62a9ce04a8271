/**
 * The rules the kernel enforces, handed in by whoever boots it. The kernel owns where each
 * applies and that nothing goes around it: every log line, tool result and frame is masked;
 * every tool call is checked against the tool policy and routed to a sandbox (or refused).
 * What the rules say is the host's (`clawPolicy`, host/policy.ts), so they can grow without
 * the kernel growing, and a test can boot the kernel with rules of its own.
 */
import type { Env } from './config/paths.js';
import type { KernelConfig } from './generated/types.js';

export interface Redactor {
  /** Mask every known secret and secret-shaped value in `input`. */
  text(input: string): string;
  /**
   * Deep: every string in plain objects and arrays; other objects and image bytes are left
   * alone. The same reference when nothing changed, so an innocent frame allocates nothing.
   */
  value<T>(input: T): T;
  /** Register a secret found at run time (a token read from a file, a minted key). */
  add(secret: string | undefined): void;
}

/** Who is calling a tool and with which model; everything else comes from config. */
export interface ToolSubject {
  agentId?: string;
  /** Full model ref, "provider/model". */
  model?: string;
  /** A sub-agent session's key narrows the set by its spawn depth. */
  sessionKey?: string;
}

/** Where a call runs: `spec` is set when the session is sandboxed, and is what the backend ensures. */
export interface SandboxDecision {
  /** Why the session is (or is not) sandboxed, in words. */
  reason: string;
  /** Which plugin holds the sandbox slot ("none" when nobody does). */
  backend: string;
  spec?: { workspaceAccess: 'none' | 'ro' | 'rw'; workspaceRoot: string };
}

export interface SandboxCall {
  agentId?: string;
  sessionKey?: string;
  /** The agent's own workspace (mounted for workspaceAccess "ro"/"rw"). */
  workspaceDir: string;
  stateDir: string;
}

type Issue = { level: string; path: string; message: string };

export interface KernelPolicy {
  /** The one redaction layer, from the resolved config (secret-named keys, patterns) and env. */
  redactor(config: Record<string, unknown>, env: Env): Redactor;
  /** Config problems no schema can see: a pattern that does not compile, an id given twice. */
  configIssues(config: KernelConfig): Array<{ path: string; message: string }>;
  /** An unknown-key error as it should stand (a key another tool documents may be only a warning). */
  tolerate<T extends Issue>(issue: T): T;
  /** Which tools `subject` may call (the caller's own restriction can only narrow it). */
  toolPolicy(config: KernelConfig, subject: ToolSubject): (tool: string) => boolean;
  /** Whether a call from this session is sandboxed, and in what. */
  sandboxRoute(config: KernelConfig, call: SandboxCall): SandboxDecision;
}
