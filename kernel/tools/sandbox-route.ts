/**
 * Sandbox routing, the tool choke point's step before approval: a tool that runs commands or
 * touches files (`runsInSandbox`) gets the session's sandbox on its context, or the call is
 * refused. Whether a session is sandboxed, and in what, is the policy's answer
 * (KernelPolicy.sandboxRoute); that no such call runs on the host without one is the kernel's.
 */
import { mkdir } from 'node:fs/promises';
import type { KernelConfig } from '../generated/types.js';
import type { KernelPolicy } from '../policy.js';
import type { CapabilityLookup, ToolContext, ToolDefinition, ToolSandbox } from '../plugin-host/capabilities.js';

export interface SandboxRouteDeps {
  route: KernelPolicy['sandboxRoute'];
  capabilities: Pick<CapabilityLookup, 'slot'>;
  config(): KernelConfig;
  paths: { stateDir: string; workspaceDir: string };
}

/**
 * The sandbox for this call, on the context of tools that run commands or touch files
 * (`runsInSandbox`). A string is the reason the call is refused: the session must be
 * sandboxed and no backend can provide one, so nothing runs on the host instead.
 */
export async function routeSandbox(
  deps: SandboxRouteDeps | undefined,
  tool: ToolDefinition,
  context: Omit<ToolContext, 'toolCallId'>,
): Promise<ToolSandbox | undefined | string> {
  if (!deps || !tool.runsInSandbox) return undefined;
  const route = deps.route(deps.config(), {
    ...context,
    workspaceDir: context.workspaceDir ?? deps.paths.workspaceDir,
    stateDir: deps.paths.stateDir,
  });
  if (!route.spec) return undefined;
  const refuse = (why: string) =>
    `Tool "${tool.name}" needs a sandbox (${route.reason}) but ${why}; nothing was run on the host.`;
  if (route.backend === 'none')
    return refuse(
      'no sandbox backend is configured (plugins.slots.sandbox is "none"; set it to "sandbox-docker" or "sandbox-bwrap")',
    );
  try {
    const backend = await deps.capabilities.slot('sandbox');
    if (!backend) return refuse(`the sandbox backend "${route.backend}" is not available`);
    const check = (await backend.check()) as { ok: boolean; reason?: string };
    if (!check.ok) return refuse(`the sandbox backend "${route.backend}" cannot run here: ${check.reason}`);
    if (route.spec.workspaceAccess === 'none') await mkdir(route.spec.workspaceRoot, { recursive: true, mode: 0o700 });
    return (await backend.ensure(route.spec)) as ToolSandbox;
  } catch (error) {
    return refuse(`the sandbox backend "${route.backend}" failed: ${(error as Error).message}`);
  }
}
