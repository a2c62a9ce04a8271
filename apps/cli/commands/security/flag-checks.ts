/**
 * Break-glass switches (`config.insecure_or_dangerous_flags`): settings that deliberately
 * switch a protection off. One finding per switch that is on, so accepting one never hides
 * another. OpenClaw's list, limited to the keys claw accepts, plus claw's own SSRF
 * policies (web_fetch, cron webhooks) whose private-network opt-in OpenClaw does not report.
 */
import { listedAgents } from './facts.js';
import { section, type AnyRecord, type AuditContext, type Finding } from './types.js';

interface Flag {
  key: string;
  value: boolean;
  why: string;
  /** What to do instead, when there is a narrower setting. */
  instead?: string;
}

const PRIVATE_NETWORK =
  'may reach loopback, private and link-local addresses (the gateway itself, the router, cloud metadata services)';
const UNWRAPPED = 'webhook payloads reach the agent without the external-content wrapping that marks them as untrusted';
const FS_ANYWHERE = 'read, write, edit and apply_patch reach every file the gateway user can';

const on = (key: string, why: string): Flag => ({ key, value: true, why });
const off = (key: string, why: string): Flag => ({ key, value: false, why });

function ssrfFlags(policy: AnyRecord, base: string, what: string): Flag[] {
  const instead = `list the private hosts it needs in ${base}.allowedHostnames`;
  return ['dangerouslyAllowPrivateNetwork', 'allowPrivateNetwork']
    .filter((key) => policy[key] === true)
    .map((key) => ({ ...on(`${base}.${key}`, `${what} ${PRIVATE_NETWORK}`), instead }));
}

/** `tools.exec` and each agent's own, by key prefix. */
function execSections(config: AnyRecord): Array<[string, AnyRecord]> {
  const agents = listedAgents(config).map((agent): [string, AnyRecord] => [
    `agents.list.${agent.id}.tools.exec`,
    section(section(agent.tools).exec),
  ]);
  return [['tools.exec', section(section(config.tools).exec)], ...agents];
}

function enabledFlags(ctx: AuditContext): Flag[] {
  const config = ctx.config;
  const tools = section(config.tools);
  const hooks = section(config.hooks);
  const flags: Flag[] = [];
  if (hooks.allowRequestSessionKey === true) {
    flags.push(on('hooks.allowRequestSessionKey', 'webhook callers choose the session their message goes to'));
  }
  const mappings: unknown[] = Array.isArray(hooks.mappings) ? hooks.mappings : [];
  mappings.forEach((mapping, index) => {
    if (section(mapping).allowUnsafeExternalContent !== true) return;
    flags.push(on(`hooks.mappings[${index}].allowUnsafeExternalContent`, UNWRAPPED));
  });
  if (section(tools.fs).workspaceOnly === false) flags.push(off('tools.fs.workspaceOnly', FS_ANYWHERE));
  for (const [base, exec] of execSections(config)) {
    if (section(exec.applyPatch).workspaceOnly === false) {
      flags.push(off(`${base}.applyPatch.workspaceOnly`, 'apply_patch may change files outside the workspace'));
    }
  }
  flags.push(...ssrfFlags(section(section(config.browser).ssrfPolicy), 'browser.ssrfPolicy', 'the browser tool'));
  flags.push(
    ...ssrfFlags(section(section(section(tools.web).fetch).ssrfPolicy), 'tools.web.fetch.ssrfPolicy', 'web_fetch'),
  );
  flags.push(
    ...ssrfFlags(section(section(config.cron).webhookSsrfPolicy), 'cron.webhookSsrfPolicy', 'cron webhook deliveries'),
  );
  return flags;
}

export function flagChecks(ctx: AuditContext): Finding[] {
  return enabledFlags(ctx).map((flag) => ({
    checkId: 'config.insecure_or_dangerous_flags',
    severity: 'warn',
    title: `Protection switched off: ${flag.key}`,
    detail: `${flag.key} is ${flag.value}: ${flag.why}.`,
    fix:
      `Remove ${flag.key} (or set it to ${!flag.value}) unless you need it right now` +
      (flag.instead ? `; ${flag.instead} instead.` : '.'),
    fixable: false,
  }));
}
