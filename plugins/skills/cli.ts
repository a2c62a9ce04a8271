/**
 * `claw skills list|info <name>|check`: asks the running gateway (`skills.status`), as
 * OpenClaw does, and reads the skills here when no gateway runs for this state dir (or it
 * cannot be reached). `--json` prints the report as is.
 */
import type { CliContext, KernelConfig, PluginApi } from '../../sdk/index.js';
import { GatewayRequestError, parseFlags, unknownCommand, UsageError } from '../../sdk/cli.js';
import { unknownAgentProblem } from '../../sdk/agent/index.js';
import type { SkillsCatalog, SkillStatus, StatusReport } from './catalog.js';

export const SKILLS_HELP = `Usage: claw skills [list] [--eligible] [--verbose] [--json] [--agent <id>]
       claw skills info <name> [--json] [--agent <id>]
       claw skills check [--json] [--agent <id>]

list   every skill found: ready or not, where it comes from (--eligible: only usable ones;
       --verbose: why each is not ready, and its path)
info   one skill: description, file, requirements and what is missing, config
check  readiness summary: what is missing for each skill, invalid SKILL.md files

Skills load from <workspace>/skills, then ~/.openclaw/skills, the bundled skills, plugin
skills and skills.load.extraDirs; the first copy of a name wins.`;

const FLAGS = {
  json: { type: 'boolean' },
  eligible: { type: 'boolean' },
  verbose: { type: 'boolean' },
  agent: { type: 'string' },
  help: { type: 'boolean' },
} as const;

const STATE_LABEL: Record<SkillStatus['state'], string> = {
  eligible: '✓ ready',
  missing: '✗ missing',
  disabled: '⏸ disabled',
  blocked: '⛔ blocked',
  excluded: '– hidden',
  invalid: '⚠ invalid',
  shadowed: '↷ shadowed',
};

export async function skillsCommand(
  argv: string[],
  ctx: CliContext,
  api: PluginApi,
  catalog: SkillsCatalog,
): Promise<number> {
  const [sub = 'list', ...rest] = argv[0] && !argv[0].startsWith('-') ? argv : ['list', ...argv];
  if (!['list', 'info', 'check'].includes(sub)) throw unknownCommand('skills', sub, ['list', 'info', 'check']);
  const { values, positionals } = parseFlags(rest, FLAGS);
  if (sub === 'info' ? positionals.length !== 1 : positionals.length > 0) {
    throw new UsageError(
      sub === 'info' ? 'claw skills info needs one skill name' : `unexpected argument "${positionals[0]}"`,
    );
  }
  const agentId = values.agent as string | undefined;
  const report = await statusReport(ctx, api, catalog, agentId);
  if (sub === 'info') return info(ctx, report, positionals[0]!, values.json === true);
  if (sub === 'check') return check(ctx, report, values.json === true);
  return list(ctx, report, {
    json: values.json === true,
    eligible: values.eligible === true,
    verbose: values.verbose === true,
  });
}

/** From the running gateway when there is one; read here otherwise. */
async function statusReport(
  ctx: CliContext,
  api: PluginApi,
  catalog: SkillsCatalog,
  agentId: string | undefined,
): Promise<StatusReport> {
  if (ctx.env.OPENCLAW_GATEWAY_URL !== undefined || ctx.gateway.running()) {
    try {
      return (await ctx.gateway.connect({}, (client) =>
        client.request('skills.status', agentId ? { agentId } : {}),
      )) as StatusReport;
    } catch (error) {
      // Only an implicitly chosen local gateway may fall back to reading here.
      if (
        !(error instanceof GatewayRequestError && error.code === 'UNAVAILABLE') ||
        ctx.env.OPENCLAW_GATEWAY_URL !== undefined
      )
        throw error;
    }
  }
  if (agentId !== undefined) {
    const problem = unknownAgentProblem(api.kernel.config() as KernelConfig, agentId);
    if (problem) throw new UsageError(problem);
  }
  return catalog.report(agentId);
}

function source(skill: SkillStatus): string {
  return skill.source === 'plugin' ? `plugin:${skill.pluginId}` : skill.source;
}

function list(
  ctx: CliContext,
  report: StatusReport,
  options: { json: boolean; eligible: boolean; verbose: boolean },
): number {
  const skills = report.skills.filter((skill) => !options.eligible || skill.eligible);
  if (options.json) {
    ctx.stdout.write(`${JSON.stringify({ ...report, skills }, null, 2)}\n`);
    return 0;
  }
  const ready = report.skills.filter((skill) => skill.eligible).length;
  const used = report.skills.filter((skill) => skill.state !== 'shadowed' && skill.state !== 'invalid').length;
  ctx.stdout.write(`Skills for agent ${report.agentId} (${ready}/${used} ready; workspace ${report.workspaceDir})\n`);
  if (skills.length === 0) {
    ctx.stdout.write(options.eligible ? 'No skill is ready.\n' : 'No skills found.\n');
    return 0;
  }
  const width = Math.min(28, Math.max(...skills.map((skill) => skill.name.length + 3)));
  for (const skill of skills) {
    const name = `${skill.emoji ?? '·'} ${skill.name}`;
    const description = (skill.description ?? skill.reasons[0] ?? '').replace(/\s+/g, ' ');
    ctx.stdout.write(
      `${STATE_LABEL[skill.state].padEnd(11)} ${name.padEnd(width)} ${source(skill).padEnd(10)} ${description.length > 80 ? `${description.slice(0, 79)}…` : description}\n`,
    );
    if (options.verbose) {
      for (const reason of skill.eligible ? [] : skill.reasons) ctx.stdout.write(`${' '.repeat(12)}↳ ${reason}\n`);
      ctx.stdout.write(`${' '.repeat(12)}${skill.filePath}\n`);
    }
  }
  return 0;
}

function info(ctx: CliContext, report: StatusReport, name: string, json: boolean): number {
  const wanted = name.toLowerCase();
  const matches = report.skills.filter(
    (skill) => skill.name.toLowerCase() === wanted || skill.skillKey.toLowerCase() === wanted,
  );
  // The copy in use first; shadowed copies only when nothing else has the name.
  const skill = matches.find((entry) => entry.state !== 'shadowed') ?? matches[0];
  if (!skill) {
    ctx.stderr.write(`claw: no skill "${name}" for agent ${report.agentId} (claw skills list shows them all)\n`);
    return 1;
  }
  if (json) {
    ctx.stdout.write(`${JSON.stringify(skill, null, 2)}\n`);
    return 0;
  }
  const req = skill.requirements;
  const lines = [
    `${skill.emoji ?? '·'} ${skill.name} — ${STATE_LABEL[skill.state]}`,
    ...(skill.description ? [skill.description] : []),
    '',
    `Source:      ${source(skill)}`,
    `File:        ${skill.filePath}`,
    ...(skill.homepage ? [`Website:     ${skill.homepage}`] : []),
    ...(skill.skillKey !== skill.name ? [`Config key:  skills.entries.${skill.skillKey}`] : []),
    `Invocation:  ${skill.userInvocable ? 'slash command' : 'no slash command'}${skill.disableModelInvocation ? ', hidden from the model' : ', listed for the model'}${skill.commandTool ? `, runs tool ${skill.commandTool}` : ''}`,
    `In prompt:   ${skill.inPrompt ? 'yes' : 'no'}`,
  ];
  const requirements = [
    ...(req.bins.length ? [`bins: ${req.bins.join(', ')}`] : []),
    ...(req.anyBins.length ? [`any of: ${req.anyBins.join(', ')}`] : []),
    ...(req.env.length ? [`env: ${req.env.join(', ')}`] : []),
    ...(req.config.length ? [`config: ${req.config.join(', ')}`] : []),
    ...(req.os.length ? [`os: ${req.os.join(', ')}`] : []),
  ];
  lines.push(
    `Requires:    ${requirements.length ? requirements.join('; ') : 'nothing'}${skill.always ? ' (always: requirements not checked)' : ''}`,
  );
  if (skill.primaryEnv)
    lines.push(
      `API key:     ${skill.primaryEnv} (skills.entries.${skill.skillKey}.apiKey ${skill.apiKeySet ? 'is set' : 'is not set'})`,
    );
  if (skill.configuredEnv.length) lines.push(`Config env:  ${skill.configuredEnv.join(', ')}`);
  if (skill.config) lines.push(`Config:      ${JSON.stringify(skill.config)}`);
  if (skill.reasons.length) lines.push('', 'Not ready:', ...skill.reasons.map((reason) => `  - ${reason}`));
  if (skill.install.length)
    lines.push(
      '',
      'Install hints:',
      ...skill.install.map((spec) => `  - ${String(spec.label ?? spec.kind ?? JSON.stringify(spec))}`),
    );
  ctx.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

function check(ctx: CliContext, report: StatusReport, json: boolean): number {
  const by = (state: SkillStatus['state']) => report.skills.filter((skill) => skill.state === state);
  const summary = {
    agentId: report.agentId,
    total: report.skills.filter((skill) => skill.state !== 'shadowed' && skill.state !== 'invalid').length,
    eligible: by('eligible').map((skill) => skill.name),
    disabled: by('disabled').map((skill) => skill.name),
    blocked: by('blocked').map((skill) => skill.name),
    excluded: by('excluded').map((skill) => skill.name),
    missingRequirements: by('missing').map((skill) => ({
      name: skill.name,
      missing: skill.missing,
      reasons: skill.reasons,
    })),
    invalid: by('invalid').map((skill) => ({ name: skill.name, filePath: skill.filePath, reason: skill.reasons[0] })),
    shadowed: by('shadowed').map((skill) => ({ name: skill.name, filePath: skill.filePath, by: skill.reasons[0] })),
    prompt: report.prompt,
  };
  if (json) {
    ctx.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    return 0;
  }
  const names = (list: string[]) => (list.length ? list.join(', ') : 'none');
  const lines = [
    `Skills check for agent ${report.agentId}`,
    `Total: ${summary.total} · Ready: ${summary.eligible.length} · Disabled: ${summary.disabled.length} · Blocked (allowBundled): ${summary.blocked.length} · Missing requirements: ${summary.missingRequirements.length} · Invalid: ${summary.invalid.length}`,
    `Ready: ${names(summary.eligible)}`,
  ];
  if (summary.disabled.length) lines.push(`Disabled: ${names(summary.disabled)}`);
  if (summary.blocked.length) lines.push(`Blocked by skills.allowBundled: ${names(summary.blocked)}`);
  if (summary.excluded.length) lines.push(`Hidden by the agent's skills allowlist: ${names(summary.excluded)}`);
  if (summary.missingRequirements.length)
    lines.push(
      '',
      'Missing requirements:',
      ...summary.missingRequirements.map((skill) => `  ${skill.name}: ${skill.reasons.join('; ')}`),
    );
  if (summary.invalid.length)
    lines.push(
      '',
      'Invalid SKILL.md files:',
      ...summary.invalid.map((skill) => `  ${skill.filePath}: ${skill.reason}`),
    );
  if (summary.shadowed.length)
    lines.push('', 'Overridden copies:', ...summary.shadowed.map((skill) => `  ${skill.filePath}: ${skill.by}`));
  const prompt = report.prompt;
  lines.push(
    '',
    `Prompt list: ${prompt.skills} skill(s), ${prompt.chars} of ${prompt.maxChars} chars (skills.limits.maxSkillsPromptChars)`,
  );
  if (prompt.omitted.length) lines.push(`Left out of the prompt (over the limit): ${prompt.omitted.join(', ')}`);
  if (prompt.shortened) lines.push(`Descriptions shortened to fit: ${prompt.shortened}`);
  lines.push(`Watching for changes: ${report.watch}`);
  ctx.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
