/**
/**
 * Tool blast radius. `exec` runs commands on the host, and by default (tools.exec.security
 * full, ask off) without asking, unless an agent's sessions are all sandboxed (sandbox mode
 * "all"). Where the tool policy lets an agent use it that way, a prompt injection in
 * anything the agent reads can become a shell command.
 */
import { userInfo } from 'node:os';
import type { KernelConfig } from '../../../../kernel/index.js';
import { sandboxSettings } from '../../../../sdk/sandbox/route.js';
import { compileToolPolicy, type ToolsConfig } from '../../../../sdk/tool-policy.js';
import { section, type AuditContext, type Finding } from './types.js';

function agentsWithExec(ctx: AuditContext): string[] {
  const list: unknown[] = Array.isArray(section(ctx.config.agents).list) ? ctx.config.agents.list : [];
  const agents = list.map(section).filter((agent) => typeof agent.id === 'string');
  const entries = agents.length > 0 ? agents : [{ id: 'main' }];
  const global = section(ctx.config.tools) as ToolsConfig;
  const globalExec = section(section(ctx.config.tools).exec);
  return entries
    .filter((agent) => compileToolPolicy({ global, agent: agent.tools as ToolsConfig | undefined })('exec'))
    .filter((agent) => sandboxSettings(ctx.config as KernelConfig, String(agent.id), ctx.stateDir).mode !== 'all')
    .filter((agent) => {
      // An allowlist, a deny or a prompt means commands do not run unattended.
      const exec = { ...globalExec, ...section(section(agent.tools).exec) };
      return (exec.security ?? 'full') === 'full' && (exec.ask ?? 'off') === 'off';
    })
    .map((agent) => String(agent.id));
}

export function toolChecks(ctx: AuditContext): Finding[] {
  const providers = ctx.plugins.filter((record) => record.enabled && record.manifest?.tools?.includes('exec'));
  if (providers.length === 0) return [];
  const agents = agentsWithExec(ctx);
  if (agents.length === 0) return [];
  let user = 'the gateway user';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): keep the generic wording.
  }
  return [{
    checkId: 'tools.exec.host_no_sandbox_no_approvals',
    severity: 'warn',
    title: 'Agents run shell commands on this machine unattended',
    detail: `The exec tool (plugin ${providers.map((record) => record.id).join(', ')}) is available to agent ${agents.join(', ')}: commands run on this host as ${user}, without a sandbox and without asking for approval, so instructions hidden in anything the agent reads can run commands.`,
    fix: 'Sandbox it (agents.defaults.sandbox.mode "non-main" or "all"; backend plugins.slots.sandbox, Docker by default), ask before host commands (tools.exec.security allowlist with tools.exec.ask on-miss; claw approvals allowlist add for the ones you trust), or take exec away where it is not needed: tools.deny ["group:runtime"] (per agent: agents.list[].tools.deny), or a tools.profile without it ("messaging" or "minimal").',
    fixable: false,
  }];
}
