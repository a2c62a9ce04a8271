/**
 * `claw gateway`, `claw gateway call`, `claw health`, `claw status`, `claw devices`.
 * The runner owns its kernel: it boots one with the gateway's logger, starts it, reboots
 * it when config.apply asks, and stops it cleanly on SIGINT/SIGTERM.
 */
import { healthLines, healthOk, statusLines } from './health-text.js';
import { randomUUID } from 'node:crypto';
import { type BootedKernel, type CliContext, type PluginApi, trace } from '../../sdk/index.js';
import { GatewayRequestError, parseFlags as parse, runCliCommand, unknownCommand, UsageError } from '../../sdk/cli.js';
import type { GatewayService } from './service.js';
import type { ServiceCommand } from './daemon/cli.js';
import { PairingStore, pairingFile, publicDevice, publicRequest, type PairingRequest } from './pairing.js';
import type { BindMode, GatewayOverrides, GatewaySection } from './settings.js';
import type { AgentService } from '../../sdk/agent/index.js';
import { useService } from '../../sdk/services.js';

const SERVICE_COMMANDS = new Set(['install', 'uninstall', 'start', 'stop', 'restart', 'status']);
const isServiceCommand = (word: string | undefined): word is ServiceCommand =>
  word !== undefined && SERVICE_COMMANDS.has(word);

const HELP: Record<string, string> = {
  gateway: `Usage: claw gateway [run] [options]        run the gateway in the foreground
       claw gateway call <method> [--params '<json>'] [options]
       claw gateway install|uninstall|start|stop|restart|status
                                            keep it running as a systemd user unit / launchd agent
                                            (claw gateway install --help)

Options (run):
  --port <n>           listen port (default: gateway.port, OPENCLAW_GATEWAY_PORT, 18789)
  --bind <mode>        loopback (default) | lan | custom
  --host <host>        the address for --bind custom
  --token <token>      require this token (also OPENCLAW_GATEWAY_TOKEN, gateway.auth.token)
  --password <pw>      require this password instead (also OPENCLAW_GATEWAY_PASSWORD)
  --verbose            debug logging

Options (call, health, status, devices):
  --url <ws://…>       gateway to talk to (default ws://127.0.0.1:<port>)
  --token, --password  shared secret, when the gateway requires one
  --timeout <ms>       per-request timeout (default 30000)
  --json               machine-readable output`,
  dashboard: `Usage: claw dashboard [--no-open] [--json]

Opens the web UI (Control UI and WebChat) signed in: the gateway token goes in the URL
fragment, which the browser keeps to itself and the page removes at once.
  --no-open   print the URL (with the token) instead of opening a browser
  --json      print {url, httpUrl, wsUrl, port, tokenIncluded, running} and open nothing`,
  devices: `Usage: claw devices list | approve <requestId> | reject <requestId> | remove <deviceId> [--json]`,
};

const isBindMode = (value: string): value is BindMode => ['loopback', 'lan', 'custom'].includes(value);

const CLIENT_FLAGS = {
  url: { type: 'string' },
  token: { type: 'string' },
  password: { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

export function runCommand(name: string, argv: string[], ctx: CliContext, api: PluginApi): Promise<number> {
  return runCliCommand(ctx, async () => {
    switch (name) {
      case 'gateway':
        if (argv[0] === 'call') return await call(argv.slice(1), ctx);
        if (isServiceCommand(argv[0])) {
          const { serviceCommand } = await import('./daemon/cli.js');
          return await serviceCommand(argv[0], argv.slice(1), ctx, api);
        }
        if (argv.includes('--help')) return print(ctx, HELP.gateway!);
        return await runGateway(argv[0] === 'run' ? argv.slice(1) : argv, ctx, api);
      case 'health':
        return await health(argv, ctx);
      case 'status':
        return await status(argv, ctx);
      case 'devices':
        return await devices(argv, ctx, api);
      case 'dashboard':
        return await dashboard(argv, ctx);
      case 'logs':
        return await (await import('./logs-cli.js')).logs(argv, ctx);
      case 'nodes':
        return await (await import('./nodes-cli.js')).nodes(argv, ctx);
      case 'qr':
        return await (await import('./qr-cli.js')).qr(argv, ctx);
      default:
        throw new UsageError(`unknown command ${name}`);
    }
  });
}

function print(ctx: CliContext, text: string): number {
  ctx.stdout.write(`${text}\n`);
  return 0;
}

// ── The long-running gateway ──────────────────────────────────────────────────────

async function runGateway(argv: string[], ctx: CliContext, api: PluginApi): Promise<number> {
  const { values, positionals } = parse(argv, {
    port: { type: 'string' },
    bind: { type: 'string' },
    host: { type: 'string' },
    token: { type: 'string' },
    password: { type: 'string' },
    verbose: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}" (see claw gateway --help)`);
  const overrides: GatewayOverrides = {};
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--port must be a port number, got "${values.port}"`);
    overrides.port = port;
  }
  if (values.bind !== undefined) {
    if (!isBindMode(values.bind)) throw new UsageError(`--bind must be loopback, lan or custom, got "${values.bind}"`);
    overrides.bind = values.bind;
  }
  if (values.host !== undefined) overrides.customBindHost = values.host;
  if (values.token !== undefined || values.password !== undefined) {
    overrides.auth = {
      ...(values.token !== undefined ? { token: values.token } : {}),
      ...(values.password !== undefined ? { password: values.password } : {}),
    };
  }
  // No config file holds them, so the redactor learns them here: no log line or error can show them.
  const maskFlags = (redact: BootedKernel['redact']) =>
    [values.token, values.password].forEach((secret) => redact.add(secret));
  maskFlags(api.kernel.redact);
  const section = api.section<GatewaySection>('gateway');
  trace('gateway: run command');
  const { createGatewayLogging } = await import('./logging.js');
  const logging = createGatewayLogging({
    stateDir: api.kernel.paths.stateDir,
    level: values.verbose ? 'debug' : section.logs.level,
    stdout: ctx.stdout,
    maxFileBytes: section.logs.maxFileBytes,
    redact: api.kernel.redact,
  });
  // The first start runs in the kernel this command was found in; a restart boots a fresh one.
  let booted = 0;
  const boot = () => ctx.boot({ logger: logging.logger, reuse: booted++ === 0 });

  let kernel: BootedKernel;
  let restarting = false;
  // The start under way: a restart asked for while the gateway is still starting waits for it.
  let starting: Promise<void> = Promise.resolve();
  const startKernel = async (): Promise<void> => {
    kernel = await boot();
    maskFlags(kernel.redact);
    // Lines the runner logs itself (restarts, failures) are masked like the kernel's.
    logging.setRedactor(kernel.redact);
    // Kept-but-unused config (OpenClaw settings claw lacks, stale entries) is named once per start.
    for (const issue of kernel.issues())
      if (issue.level === 'warning') logging.logger.warn(`config ${issue.path}: ${issue.message}`);
    const service = (await kernel.capabilities.find('service', 'gateway')) as GatewayService | undefined;
    // Set before the gateway listens: a client that connects the moment it does may ask at once.
    if (service) {
      service.runtime.requestRestart = restartWith(service);
      service.runtime.overrides = overrides;
    }
    await kernel.start();
    const record = kernel.plugins.get('gateway');
    if (!service || record?.status !== 'active') {
      await kernel.stop();
      throw new Error(record?.error ?? 'the gateway plugin did not start');
    }
    // Asked for any free port: keep the one we got across in-place restarts.
    const server = service.runtime.server;
    if (server?.address && server.settings.port === 0) overrides.port = server.address.port;
  };
  const restartWith =
    (service: GatewayService) =>
    (reason: string, delayMs: number): boolean => {
      if (restarting) return true;
      restarting = true;
      setTimeout(() => {
        logging.logger.info(`restarting (${reason})`);
        service.stopReason = { reason, restartExpectedMs: 2000 };
        starting
          .then(() => drainAgent(kernel))
          .then(() => kernel.stop())
          .then(() => (starting = startKernel()))
          .catch((error: Error) => {
            logging.logger.error(`restart failed: ${error.message}`);
            logging.flush();
            process.exit(1);
          })
          .finally(() => {
            restarting = false;
          });
      }, delayMs);
      return true;
    };
  try {
    starting = startKernel();
    await starting;
    await preferSmallHeap(ctx.env);
  } catch (error) {
    logging.flush();
    ctx.stderr.write(`claw: gateway failed to start: ${(error as Error).message}\n`);
    return 1;
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        process.exit(1); // A second signal means "now".
      }
      stopping = true;
      void (async () => {
        const service = (await kernel.capabilities.find('service', 'gateway')) as GatewayService | undefined;
        if (service) service.stopReason = { reason: signal };
        await drainAgent(kernel);
        await kernel.stop();
        logging.flush();
        resolve(0);
        // Nothing else should keep the process, but a stray handle must not keep it alive.
        setTimeout(() => process.exit(0), 200).unref();
      })();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/**
 * Before the kernel stops (SIGTERM, a restart): running turns may finish for up to
 * `gateway.agentDrainMs` while every service they use is still up; new messages are
 * refused and what is left resumes at the next start. Nothing to do when no message has
 * loaded the agent.
 */
async function drainAgent(kernel: BootedKernel): Promise<void> {
  if (kernel.plugins.get('agent')?.status !== 'active') return;
  const agent = await useService<AgentService>(kernel, 'agent').catch(() => undefined);
  await agent?.drain();
}

// ── Talking to a running gateway ──────────────────────────────────────────────────

async function call(argv: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...CLIENT_FLAGS,
    params: { type: 'string' },
    'expect-final': { type: 'boolean' },
  });
  if (values.help) return print(ctx, HELP.gateway!);
  const method = positionals[0];
  if (!method || positionals.length > 1) throw new UsageError("usage: claw gateway call <method> [--params '<json>']");
  let params: unknown;
  if (values.params !== undefined) {
    try {
      params = JSON.parse(values.params);
    } catch (error) {
      throw new UsageError(`--params is not valid JSON: ${(error as Error).message}`);
    }
  }
  const result = await ctx.gateway.connect(values, (client) =>
    client.request(method, params, { expectFinal: values['expect-final'] }),
  );
  ctx.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return 0;
}

async function health(argv: string[], ctx: CliContext): Promise<number> {
  const { values } = parse(argv, CLIENT_FLAGS);
  const snapshot = await ctx.gateway.connect(values, (client) => client.request<unknown>('health'));
  ctx.stdout.write(values.json ? `${JSON.stringify(snapshot, null, 2)}\n` : `${healthLines(snapshot).join('\n')}\n`);
  return healthOk(snapshot) ? 0 : 1;
}

async function status(argv: string[], ctx: CliContext): Promise<number> {
  const { values } = parse(argv, CLIENT_FLAGS);
  const result = await ctx.gateway.connect(values, (client) => client.request<unknown>('status'));
  ctx.stdout.write(values.json ? `${JSON.stringify(result, null, 2)}\n` : `${statusLines(result).join('\n')}\n`);
  return 0;
}

// ── The web UI ────────────────────────────────────────────────────────────────────

async function dashboard(argv: string[], ctx: CliContext): Promise<number> {
  const { values } = parse(argv, {
    'no-open': { type: 'boolean' },
    json: { type: 'boolean' },
    help: { type: 'boolean' },
  });
  if (values.help) return print(ctx, HELP.dashboard!);
  const options = ctx.gateway.target();
  const wsUrl = options.url;
  const httpUrl = `${wsUrl.replace(/^ws/, 'http').replace(/\/+$/, '')}/`;
  // Only a token can travel in the fragment; a password is typed into the sign-in form.
  const url = options.token ? `${httpUrl}#token=${encodeURIComponent(options.token)}` : httpUrl;
  const running = ctx.gateway.running() !== undefined;
  if (values.json) {
    ctx.stdout.write(
      `${JSON.stringify({ ok: true, url, httpUrl, wsUrl, port: Number(new URL(httpUrl).port), tokenIncluded: Boolean(options.token), running }, null, 2)}\n`,
    );
    return 0;
  }
  if (!running) ctx.stderr.write('The gateway is not running for this state dir; start it with `claw gateway`.\n');
  if (!options.token)
    ctx.stderr.write(
      options.password
        ? 'The gateway uses a password: enter it on the sign-in page.\n'
        : 'No gateway token is configured (claw setup makes one).\n',
    );
  if (values['no-open'] || !(await openBrowser(url))) {
    ctx.stdout.write(`${url}\n`);
    return 0;
  }
  // The token went to the browser, not to the terminal (and its scrollback).
  ctx.stdout.write(`Opened ${httpUrl}${options.token ? ' signed in with the gateway token' : ''}.\n`);
  return 0;
}

/** Open `url` in the desktop's browser; false when that did not work (no desktop, no opener). */
async function openBrowser(url: string): Promise<boolean> {
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return false;
  const { spawn } = await import('node:child_process');
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  return new Promise((resolve) => {
    // The URL is an argument, never shell text.
    const child = spawn(command as string, args as string[], { stdio: 'ignore', detached: true });
    // Openers hand the URL over and exit; one still running after a while has a browser going.
    const timer = setTimeout(() => resolve(true), 5000);
    timer.unref();
    child.once('error', () => (clearTimeout(timer), resolve(false)));
    child.once('exit', (code) => (clearTimeout(timer), resolve(code === 0)));
    child.unref();
  });
}

// ── Device pairing ────────────────────────────────────────────────────────────────

async function devices(argv: string[], ctx: CliContext, api: PluginApi): Promise<number> {
  const { values, positionals } = parse(argv, CLIENT_FLAGS);
  const [action = 'list', target] = positionals;
  if (values.help) return print(ctx, HELP.devices!);
  if (!['list', 'approve', 'reject', 'remove'].includes(action))
    throw unknownCommand('devices', action, ['list', 'approve', 'reject', 'remove']);
  if (action !== 'list' && !target)
    throw new UsageError(`usage: claw devices ${action} <${action === 'remove' ? 'deviceId' : 'requestId'}>`);
  const method = action === 'list' ? 'device.pair.list' : `device.pair.${action}`;
  const params =
    action === 'list'
      ? {}
      : { ...(action === 'remove' ? { deviceId: target } : { requestId: target }), idempotencyKey: randomUUID() };
  let result: unknown;
  let offline = false;
  try {
    result = await ctx.gateway.connect(values, (client) => client.request(method, params));
  } catch (error) {
    if (!(error instanceof GatewayRequestError) || !/not reachable/.test(error.message)) throw error;
    // No gateway running: the pairing store on disk is the truth, edit it directly.
    offline = true;
    const store = new PairingStore(pairingFile(api.kernel.paths.stateDir), api.kernel.redact);
    try {
      if (action === 'list')
        result = {
          pending: store.listPending().map(publicRequest),
          paired: store.listPaired().map((device) => publicDevice(device)),
        };
      else if (action === 'approve') result = { device: publicDevice(store.approve(target!, 'cli')) };
      else if (action === 'reject') result = store.reject(target!);
      else result = { deviceId: store.remove(target!).deviceId };
      await store.flush();
    } catch (storeError) {
      ctx.stderr.write(`claw: ${(storeError as Error).message}\n`);
      return 1;
    }
  }
  if (values.json) {
    ctx.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  }
  if (offline) ctx.stderr.write('(gateway not running: updated the pairing store directly)\n');
  if (action === 'list') {
    const { pending, paired } = result as { pending: PairingRequest[]; paired: Array<ReturnType<typeof publicDevice>> };
    const lines = [`Pending requests (${pending.length}):`];
    for (const request of pending) {
      lines.push(
        `  ${request.requestId}  device ${request.deviceId.slice(0, 12)}…  ${request.role} [${request.scopes.join(', ')}]  from ${request.remoteAddress ?? '?'}  ${request.displayName ?? request.clientId ?? ''}  expires ${request.expiresAt}`,
      );
    }
    lines.push(`Paired devices (${paired.length}):`);
    for (const device of paired) {
      lines.push(
        `  ${device.deviceId.slice(0, 12)}…  ${device.displayName ?? device.clientId ?? ''}  roles ${device.roles.join(', ')}  last seen ${device.lastSeenAt ?? 'never'}`,
      );
    }
    ctx.stdout.write(`${lines.join('\n')}\n`);
  } else {
    const label = action === 'remove' ? `device ${target}` : `request ${target}`;
    ctx.stdout.write(`${action === 'approve' ? 'Approved' : action === 'reject' ? 'Rejected' : 'Removed'} ${label}.\n`);
  }
  return 0;
}

/**
 * A gateway runs for weeks: V8's default heuristics let its heap fill with garbage for a long
 * time before a full collection (a 3,000-turn soak reached 297 MB RSS with a live heap under
 * 31 MB). V8's optimize-for-size mode collects sooner and keeps the young generation small;
 * the same soak stays within 134 MB at the same turn rate (BENCHMARKS.md). Set once the
 * gateway has started: during start-up its smaller young generation only meant more
 * collections (10–15 ms more before listening). CLAW_GATEWAY_HEAP=speed keeps V8's defaults.
 * node:v8 loads here, after the start, for the same reason.
 */
async function preferSmallHeap(env: Record<string, string | undefined>): Promise<void> {
  if (env.CLAW_GATEWAY_HEAP === 'speed') return;
  (await import('node:v8')).setFlagsFromString('--optimize-for-size');
}
