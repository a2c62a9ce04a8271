/**
 * `claw hooks list|info|check|enable|disable`: the internal hooks this machine would load,
 * judged against the config (OpenClaw's report: ready, eligible, why not), and switching
 * one on or off. Enable and disable write `hooks.internal.entries.<hookKey>.enabled`
 * through the running gateway when there is one (it validates, writes and applies the
 * change at once), else in the config file under the config lock.
 */
import type { CliContext, PluginApi } from '../../sdk/index.js';
import { cliCommand, parseFlags, unknownCommand, UsageError, type ConfigChange } from '../../sdk/cli.js';
import { normalizeAgentId, unknownAgentProblem } from '../../sdk/agent/index.js';
import { describeMissing, type HookStatus } from './discovery.js';
import { hookInventory } from './runner.js';

export const HOOKS_HELP = `Usage: claw hooks [list] [--eligible] [--json] [-v|--verbose] [--agent <id>]   internal hooks and whether each is ready
       claw hooks info <name> [--json] [--agent <id>]                         one hook: source, files, events, requirements
       claw hooks check [--json] [--agent <id>]                               how many are ready, and why the others are not
       claw hooks enable <name> [--agent <id>]                                hooks.internal.entries.<name>.enabled = true (and hooks.internal.enabled)
       claw hooks disable <name> [--agent <id>]                               hooks.internal.entries.<name>.enabled = false`;

const FLAGS = {
  json: { type: 'boolean' },
  eligible: { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
  agent: { type: 'string' },
  help: { type: 'boolean' },
} as const;

function publicView(hook: HookStatus) {
  return {
    name: hook.name,
    description: hook.description,
    source: hook.source,
    ...(hook.emoji ? { emoji: hook.emoji } : {}),
    ...(hook.homepage ? { homepage: hook.homepage } : {}),
    events: hook.events,
    unknownEvents: hook.unknownEvents,
    enabledByConfig: hook.enabledByConfig,
    requirementsSatisfied: hook.requirementsSatisfied,
    loadable: hook.loadable,
    eligible: hook.loadable,
    disabled: !hook.enabledByConfig,
    ...(hook.blockedReason ? { blockedReason: hook.blockedReason } : {}),
    missing: hook.missing,
  };
}

/** Exact names first, then a hookKey that names exactly one hook. */
export function findHook(hooks: readonly HookStatus[], selector: string): HookStatus {
  const byName = hooks.find((hook) => hook.name === selector);
  if (byName) return byName;
  const byKey = hooks.filter((hook) => hook.hookKey === selector);
  if (byKey.length === 1) return byKey[0]!;
  if (byKey.length > 1)
    throw new UsageError(
      `"${selector}" is the hookKey of several hooks (${byKey.map((hook) => hook.name).join(', ')}): name one`,
    );
  throw new UsageError(`no hook named "${selector}" (claw hooks list shows them)`);
}

export function hooksCli(argv: string[], ctx: CliContext, api: PluginApi, bundledDir: string): Promise<number> {
  return cliCommand(HOOKS_HELP, async (args) => {
    const { values, positionals } = parseFlags(args, FLAGS);
    const [action = 'list', ...rest] = positionals;
    const agent = values.agent as string | undefined;
    if (agent !== undefined) {
      const problem = unknownAgentProblem(api.kernel.config(), agent);
      if (problem) throw new UsageError(problem);
    }
    const inventory = hookInventory(api.kernel, bundledDir, agent === undefined ? undefined : normalizeAgentId(agent));
    const json = values.json === true;
    const out = (text: string) => ctx.stdout.write(text.endsWith('\n') ? text : `${text}\n`);

    if (action === 'list') {
      if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}"`);
      const hooks = values.eligible ? inventory.statuses.filter((hook) => hook.loadable) : inventory.statuses;
      if (json) {
        out(
          JSON.stringify(
            {
              workspaceDir: inventory.workspaceDir,
              managedHooksDir: inventory.managedDir,
              hooks: hooks.map(publicView),
            },
            null,
            2,
          ),
        );
        return 0;
      }
      const ready = inventory.statuses.filter((hook) => hook.loadable).length;
      // Ready is not running: nothing runs until hooks.internal selects it (claw hooks enable <name>).
      const on = new Set(inventory.selected.map((hook) => hook.name));
      const lines = [`Hooks (${ready}/${inventory.statuses.length} ready, ${on.size} on)`];
      for (const hook of hooks) {
        const status = hook.loadable
          ? on.has(hook.name)
            ? '✓ on'
            : '○ ready'
          : `✗ ${hook.enabledByConfig ? 'blocked' : 'disabled'}`;
        const description = hook.description.length > 60 ? `${hook.description.slice(0, 59)}…` : hook.description;
        let line = `${status.padEnd(11)} ${`${hook.emoji ?? '🔗'} ${hook.name}`.padEnd(24)} ${description.padEnd(60)}  ${hook.source}`;
        if (values.verbose && hook.blockedReason) line += `\n            ${hook.blockedReason}`;
        lines.push(line);
      }
      if (hooks.length === 0) lines.push(values.eligible ? 'No hook is ready.' : 'No hooks found.');
      out(lines.join('\n'));
      return 0;
    }

    if (action === 'info') {
      if (rest.length !== 1) throw new UsageError('usage: claw hooks info <name>');
      const hook = findHook(inventory.statuses, rest[0]!);
      if (json) {
        out(
          JSON.stringify(
            {
              ...publicView(hook),
              filePath: hook.filePath,
              baseDir: hook.baseDir,
              handlerPath: hook.handlerPath ?? null,
              hookKey: hook.hookKey,
              always: hook.always,
              requirements: hook.requires,
              ...(hook.shadowed ? { shadowed: hook.shadowed } : {}),
            },
            null,
            2,
          ),
        );
        return 0;
      }
      const lines = [
        `${hook.emoji ?? '🔗'} ${hook.name}${hook.loadable ? ' (ready)' : ` (not ready: ${hook.blockedReason})`}`,
        hook.description,
        `Source:   ${hook.source}`,
        `HOOK.md:  ${hook.filePath}`,
        `Handler:  ${hook.handlerPath ?? 'none'}`,
        `Events:   ${hook.events.join(', ') || 'none'}`,
      ];
      if (hook.hookKey !== hook.name) lines.push(`Config:   hooks.internal.entries.${hook.hookKey}`);
      if (hook.homepage) lines.push(`Homepage: ${hook.homepage}`);
      if (hook.unknownEvents.length) lines.push(`Warning:  claw never emits ${hook.unknownEvents.join(', ')}`);
      for (const [kind, list] of Object.entries(hook.requires) as Array<[keyof HookStatus['requires'], string[]]>) {
        for (const item of list)
          lines.push(
            `Requires ${kind} ${item}: ${hook.missing[kind].includes(item) || (kind === 'anyBins' && hook.missing.anyBins.length) ? 'missing' : 'ok'}`,
          );
      }
      if (hook.shadowed) lines.push(`Shadows:  ${hook.shadowed.join(', ')}`);
      out(lines.join('\n'));
      return 0;
    }

    if (action === 'check') {
      const eligible = inventory.statuses.filter((hook) => hook.loadable);
      const notEligible = inventory.statuses.filter((hook) => !hook.loadable);
      if (json) {
        out(
          JSON.stringify(
            {
              total: inventory.statuses.length,
              eligible: eligible.length,
              notEligible: notEligible.length,
              hooks: {
                eligible: eligible.map((hook) => hook.name),
                notEligible: notEligible.map((hook) => ({
                  name: hook.name,
                  blockedReason: hook.blockedReason,
                  missing: hook.missing,
                })),
              },
            },
            null,
            2,
          ),
        );
        return 0;
      }
      const lines = [`${eligible.length} of ${inventory.statuses.length} hooks ready.`];
      for (const hook of notEligible) lines.push(`  ${hook.name}: ${hook.blockedReason}`);
      out(lines.join('\n'));
      return 0;
    }

    if (action === 'enable' || action === 'disable') {
      if (rest.length !== 1) throw new UsageError(`usage: claw hooks ${action} <name>`);
      const hook = findHook(inventory.statuses, rest[0]!);
      const on = action === 'enable';
      if (on && hook.error) throw new UsageError(`hook ${hook.name} cannot be enabled: ${hook.error}`);
      if (on && !hook.requirementsSatisfied)
        throw new UsageError(
          `hook ${hook.name} cannot be enabled: missing requirements: ${describeMissing(hook.missing)}`,
        );
      const change = await writeEntry(ctx, hook.hookKey, on);
      const where =
        change.via === 'gateway'
          ? change.reload?.restartRequired
            ? 'the running gateway applies it after a restart'
            : 'live in the running gateway'
          : 'the gateway picks it up when it starts (or from disk if running)';
      out(
        `${on ? 'Enabled' : 'Disabled'} hook ${hook.name}: hooks.internal.entries.${hook.hookKey}.enabled = ${on}${change.changed ? '' : ' (already so)'}; ${where}.`,
      );
      if (on && hook.events.includes('gateway:startup')) out('It runs at the next gateway start.');
      return 0;
    }
    throw unknownCommand('hooks', action, ['list', 'info', 'check', 'enable', 'disable']);
  })(argv, ctx);
}

async function writeEntry(ctx: CliContext, hookKey: string, on: boolean): Promise<ConfigChange> {
  const edit = (raw: Record<string, unknown>) => {
    const hooks = (raw.hooks ??= {}) as Record<string, unknown>;
    const internal = (hooks.internal ??= {}) as Record<string, unknown>;
    const entries = (internal.entries ??= {}) as Record<string, Record<string, unknown>>;
    entries[hookKey] = { ...(entries[hookKey] ?? {}), enabled: on };
    if (on) internal.enabled = true;
  };
  return ctx.gateway.changeConfig(`claw hooks ${on ? 'enable' : 'disable'} ${hookKey}`, edit);
}
