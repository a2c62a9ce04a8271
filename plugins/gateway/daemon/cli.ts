/**
 * `claw gateway install|uninstall|start|stop|restart|status`: the gateway kept running by
 * the OS (systemd user unit, launchd agent) with OpenClaw's subcommands and flags. Where
 * no service manager can be reached the command says so, points at `claw gateway` in the
 * foreground, and exits 1.
 */
import type { CliContext, GatewayFlags, PluginApi } from '../../../sdk/index.js';
import { parseFlags as parse, UsageError } from '../../../sdk/cli.js';
import { Daemon, DaemonConflict, ServiceManagerUnavailable } from './control.js';
import { configuredPort, FOREGROUND, installService, parsePort } from './install.js';

export type ServiceCommand = 'install' | 'uninstall' | 'start' | 'stop' | 'restart' | 'status';

export const SERVICE_HELP = `Usage: claw gateway install [--port <n>] [--force] [--json]
       claw gateway uninstall | start | stop | restart [--json]
       claw gateway status [--port <n>] [--url <ws://…>] [--token <t>] [--password <p>] [--timeout <ms>] [--no-probe] [--json]

Keeps the gateway running as a systemd user unit (~/.config/systemd/user/openclaw-gateway.service,
openclaw-gateway-<profile>.service for a profile) or a launchd agent (~/Library/LaunchAgents/
ai.openclaw.gateway.plist). The unit runs this Node and claw with \`gateway --port <n>\` and the
OPENCLAW_* location variables you set; no secret goes in it (the gateway reads its token from the config).

  install     write the unit and start it; the same unit again is a no-op, a different one
              needs --force (which replaces it and restarts the service)
  uninstall   stop and disable the service, remove the unit
  start, stop, restart   through systemctl --user / launchctl
  status      the unit, what the service manager says, the gateway lock's pid, and whether a
              gateway answers on the port (--no-probe skips that)

Without a service manager (a container, an SSH session with no user bus) these exit 1:
run the gateway in the foreground with \`claw gateway\` instead.`;

export async function serviceCommand(
  command: ServiceCommand,
  argv: string[],
  ctx: CliContext,
  api: PluginApi,
): Promise<number> {
  const flags = parse(argv, {
    port: { type: 'string' },
    force: { type: 'boolean' },
    json: { type: 'boolean' },
    help: { type: 'boolean' },
    ...(command === 'status'
      ? {
          url: { type: 'string' },
          token: { type: 'string' },
          password: { type: 'string' },
          timeout: { type: 'string' },
          'no-probe': { type: 'boolean' },
        }
      : {}),
  } as const);
  const values = flags.values as Record<string, string | boolean | undefined>;
  if (values.help) return print(ctx, SERVICE_HELP);
  if (flags.positionals.length > 0)
    throw new UsageError(`unexpected argument "${flags.positionals[0]}" (see claw gateway --help)`);
  if (values.force && command !== 'install')
    throw new UsageError(`--force is for claw gateway install (replace a different unit)`);
  if (values.port !== undefined && command !== 'install' && command !== 'status')
    throw new UsageError(`--port is for claw gateway install and status`);
  const json = values.json === true;
  const port = values.port !== undefined ? parsePort(String(values.port)) : configuredPort(api);
  const daemon = new Daemon(api.kernel.env, api.kernel.paths);
  const report = (result: Record<string, unknown>, line: string, code = 0): number => {
    if (json) ctx.stdout.write(`${JSON.stringify({ ok: code === 0, ...result }, null, 2)}\n`);
    else (code === 0 ? ctx.stdout : ctx.stderr).write(`${line}\n`);
    return code;
  };
  try {
    switch (command) {
      case 'install': {
        const outcome = await installService(api, daemon, {
          ...(values.port !== undefined ? { port } : {}),
          force: values.force === true,
        });
        if (!outcome.ok) return report({ action: 'install', error: outcome.error }, `claw: ${outcome.message}`, 1);
        return report({ action: 'install', ...outcome.result, port: outcome.port }, outcome.message);
      }
      case 'uninstall': {
        const result = await daemon.uninstall();
        return report({ action: 'uninstall', file: daemon.file, removed: result.done }, capitalize(result.message));
      }
      case 'start':
        await daemon.start();
        return report({ action: 'start', service: daemon.name }, `Started ${daemon.name}.`);
      case 'stop': {
        const result = await daemon.stop();
        return report({ action: 'stop', service: daemon.name, stopped: result.done }, capitalize(result.message));
      }
      case 'restart': {
        const result = await daemon.restart();
        if (!result.done) throw new DaemonConflict(`${result.message}; install it with: claw gateway install`);
        return report({ action: 'restart', service: daemon.name }, `Restarted ${daemon.name}.`);
      }
      case 'status':
        return await status(daemon, port, values, ctx, json);
    }
  } catch (error) {
    if (error instanceof ServiceManagerUnavailable)
      return report(
        { action: command, error: { code: 'SERVICE_MANAGER_UNAVAILABLE', message: error.message } },
        `claw: ${error.message}.\n${FOREGROUND}`,
        1,
      );
    if (error instanceof DaemonConflict)
      return report({ action: command, error: { message: error.message } }, `claw: ${error.message}`, 1);
    throw error;
  }
}

async function status(
  daemon: Daemon,
  port: number,
  values: Record<string, string | boolean | undefined>,
  ctx: CliContext,
  json: boolean,
): Promise<number> {
  if (values.url !== undefined && values.port !== undefined)
    throw new UsageError('--url and --port cannot be combined');
  const service = await daemon.status(port);
  const lock = ctx.gateway.running();
  const target: GatewayFlags = {
    url: typeof values.url === 'string' ? values.url : values.port !== undefined ? `ws://127.0.0.1:${port}` : undefined,
    token: values.token as string | undefined,
    password: values.password as string | undefined,
    timeout: (values.timeout as string | undefined) ?? '5000',
  };
  let probe: { url?: string; ok: boolean; error?: string } | undefined;
  if (!values['no-probe']) {
    probe = { ok: false };
    try {
      probe.url = ctx.gateway.target(target).url;
      await ctx.gateway.connect(target, (client) => client.request('health'));
      probe.ok = true;
    } catch (error) {
      probe.error = (error as Error).message;
    }
  }
  const code = service.unavailable ? 1 : 0;
  if (json) {
    ctx.stdout.write(
      `${JSON.stringify({ ok: code === 0, service, lock: lock ?? null, probe: probe ?? null }, null, 2)}\n`,
    );
    return code;
  }
  const fileState = !service.installed
    ? 'not installed (claw gateway install)'
    : service.current === false
      ? 'installed, differs from what claw gateway install --force would write now'
      : 'installed';
  const lines = [`Service: ${service.service} (${daemon.managerName})`, `  File:    ${service.file} — ${fileState}`];
  if (service.unavailable) lines.push(`  Manager: ${service.unavailable}`, `  ${FOREGROUND}`);
  else if (service.state) {
    const state = service.state;
    const enabled = state.enabled === undefined ? '' : state.enabled ? ', enabled' : ', not enabled';
    lines.push(
      `  State:   ${state.loaded ? state.active : 'not loaded'}${enabled}${state.pid ? `, pid ${state.pid}` : ''}`,
    );
  }
  lines.push(
    lock
      ? `Gateway lock: pid ${lock.pid}${lock.port ? `, port ${lock.port}` : ''}, since ${lock.startedAt}`
      : 'Gateway lock: none (no gateway running for this state dir)',
  );
  if (probe?.ok) lines.push(`Probe:   a gateway answers on ${probe.url}`);
  else if (probe) lines.push(`Probe:   no answer${probe.url ? ` from ${probe.url}` : ''} (${probe.error})`);
  ctx.stdout.write(`${lines.join('\n')}\n`);
  return code;
}

function print(ctx: CliContext, text: string): number {
  ctx.stdout.write(`${text}\n`);
  return 0;
}

function capitalize(text: string): string {
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}
