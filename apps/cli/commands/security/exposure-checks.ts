/**
 * Access policy × tool blast radius (`security.exposure.*`): a channel open to strangers is
 * only as dangerous as what the agents behind it can do. Each finding names the open keys
 * and the agents whose tools a prompt injection in those chats could reach. Every agent
 * counts (as in OpenClaw), not only the one a binding routes the channel to: routes change.
 */
import { auditFacts, type AgentScope, type OpenInbound } from './facts.js';
import { section, type AuditContext, type Finding } from './types.js';

const RUNTIME_TOOLS = ['exec', 'process'];
const FS_TOOLS = ['read', 'write', 'edit', 'apply_patch'];
/** Tools that change the assistant itself or schedule work: OpenClaw's control plane (cron is its automations tool). */
const CONTROL_PLANE_TOOLS = ['cron', 'automations', 'gateway', 'plugins'];

const openKeys = (open: readonly OpenInbound[]) => open.map((entry) => entry.path).join(', ');
const TIGHTEN = 'set dmPolicy to "pairing" or "allowlist" and groupPolicy to "allowlist" on the listed keys';

function elevatedFinding(ctx: AuditContext, open: readonly OpenInbound[], scopes: readonly AgentScope[]): Finding[] {
  // claw's elevated mode is off unless tools.elevated.enabled is true (OpenClaw: on unless false).
  if (section(section(ctx.config.tools).elevated).enabled !== true) return [];
  const agents = scopes.filter((scope) => section(scope.tools.elevated).enabled !== false).map((scope) => scope.id);
  if (agents.length === 0) return [];
  return [
    {
      checkId: 'security.exposure.open_groups_with_elevated',
      severity: 'critical',
      title: 'Open chats reach agents with elevated mode',
      detail:
        `Open to anyone: ${openKeys(open)}. tools.elevated is on for agent ${agents.join(', ')}: one allowlisted sender in those ` +
        `chats, or a prompt injection riding their messages, can run commands outside the sandbox.`,
      fix: `Close the chats (${TIGHTEN}) or set tools.elevated.enabled to false; keep tools.elevated.allowFrom to named senders.`,
      fixable: false,
    },
  ];
}

function runtimeOrFsFinding(ctx: AuditContext, open: readonly OpenInbound[], scopes: readonly AgentScope[]): Finding[] {
  const fsConfined = section(section(ctx.config.tools).fs).workspaceOnly !== false;
  let runtime = false;
  const reached = scopes.flatMap((scope) => {
    if (scope.sandbox.mode === 'all') return [];
    const runtimeTools = RUNTIME_TOOLS.filter(scope.can);
    const fsTools = fsConfined ? [] : FS_TOOLS.filter(scope.can);
    if (runtimeTools.length === 0 && fsTools.length === 0) return [];
    if (runtimeTools.length > 0) runtime = true;
    return [`${scope.id} (sandbox ${scope.sandbox.mode}; ${[...runtimeTools, ...fsTools].join(', ')})`];
  });
  if (reached.length === 0) return [];
  return [
    {
      checkId: 'security.exposure.open_groups_with_runtime_or_fs',
      severity: runtime ? 'critical' : 'warn',
      title: 'Open chats reach shell or file tools on the host',
      detail:
        `Open to anyone: ${openKeys(open)}. Unsandboxed tools of agent ` +
        `${reached.join('; ')}${fsConfined ? '' : '; tools.fs.workspaceOnly is false, so the file tools reach the whole disk'}: text from ` +
        `a stranger can become commands or file changes.`,
      fix:
        `Close the chats (${TIGHTEN}), or for the agents behind them: agents.defaults.sandbox.mode "all", tools.deny ["group:runtime"] ` +
        `(and "group:fs"), or tools.profile "messaging"; keep tools.fs.workspaceOnly true.`,
      fixable: false,
    },
  ];
}

function controlPlaneFinding(open: readonly OpenInbound[], scopes: readonly AgentScope[]): Finding[] {
  const reached = scopes.flatMap((scope) => {
    const tools = CONTROL_PLANE_TOOLS.filter(scope.can);
    return tools.length > 0 ? [`${scope.id} (${tools.join(', ')})`] : [];
  });
  if (reached.length === 0) return [];
  return [
    {
      checkId: 'security.exposure.open_groups_with_control_plane_tools',
      severity: 'critical',
      title: 'Open chats reach tools that schedule work or change the assistant',
      detail:
        `Open to anyone: ${openKeys(open)}. Control-plane tools of agent ${reached.join('; ')}: a prompt injection can plant ` +
        `scheduled jobs that run later with the agent's full tools, outside the chat it came from.`,
      fix:
        `Close the chats (${TIGHTEN}), or deny those tools to the agents behind them: tools.deny ["cron"] (per agent: ` +
        `agents.list[].tools.deny), or tools.profile "messaging".`,
      fixable: false,
    },
  ];
}

function execFinding(open: readonly OpenInbound[], scopes: readonly AgentScope[]): Finding[] {
  const withExec = scopes.filter((scope) => scope.can('exec') && scope.exec.security !== 'deny');
  if (withExec.length === 0) return [];
  const full = withExec.some((scope) => scope.exec.security === 'full');
  const described = withExec.map(
    (scope) => `${scope.id}: security ${scope.exec.security}, ask ${scope.exec.ask}, sandbox ${scope.sandbox.mode}`,
  );
  return [
    {
      checkId: 'security.exposure.open_channels_with_exec',
      severity: full ? 'critical' : 'warn',
      title: 'Open chats reach agents that run shell commands',
      detail:
        `Open to anyone: ${openKeys(open)}. Agents with exec: ` +
        `${described.join('; ')}${full ? ' (security "full" runs any command without asking; it is claw\'s default)' : ''}.`,
      fix:
        `Close the chats (${TIGHTEN}), or take exec from the agents behind them (tools.deny ["group:runtime"]), or set ` +
        `tools.exec.security "allowlist" with tools.exec.ask "on-miss".`,
      fixable: false,
    },
  ];
}

export function exposureChecks(ctx: AuditContext): Finding[] {
  const { openInbound, scopes } = auditFacts(ctx);
  if (openInbound.length === 0) return [];
  return [
    ...execFinding(openInbound, scopes),
    ...elevatedFinding(ctx, openInbound, scopes),
    ...runtimeOrFsFinding(ctx, openInbound, scopes),
    ...controlPlaneFinding(openInbound, scopes),
  ];
}
