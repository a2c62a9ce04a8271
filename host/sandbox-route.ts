/**
 * Sandbox routing, the tool choke point's step before approval (KernelPolicy.sandbox): a tool
 * that runs commands or touches files (`runsInSandbox`) gets the session's sandbox on its
 * context, or the call is refused. Whether a session is sandboxed, and in what, is the route's
 * answer (the SDK's resolveSandboxRoute); that no such call then runs on the host is this step's.
 */
import { mkdir } from 'node:fs/promises';
import type { KernelConfig, KernelPolicy, ToolSandbox } from '../kernel/index.js';
import type { SandboxCall, SandboxDecision } from '../sdk/sandbox/route.js';

export type SandboxRouter = (config: KernelConfig, call: SandboxCall) => SandboxDecision;

/**
 * The sandbox for a call, from `route`. A string is the reason the call is refused: the session
 * must be sandboxed and no backend can provide one, so nothing runs on the host instead.
 */
export function sandboxStep(route: SandboxRouter): KernelPolicy['sandbox'] {
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
