/**
 * `claw onboard`: the setup wizard in the terminal, or `--non-interactive` from flags.
 * Config changes go through `ctx.gateway.changeConfig` (a running gateway validates and
 * applies them; without one the file is written under its lock).
 */
import { randomUUID } from 'node:crypto';
import type { ChannelLoginState, CliContext, PluginApi } from '../../sdk/index.js';
import { parseFlags, UsageError } from '../../sdk/cli.js';
import { kernelDeps, localWhatsappLogin, QR_WAIT_MS } from './deps.js';
import { flagPrompter, OnboardCheckFailed, type OnboardFlags } from './flag-prompter.js';
import { runOnboarding, SECTIONS } from './flow.js';
import type { OnboardDeps, OnboardSummary } from './steps.js';
import { WizardCancelled, type WizardFlow, type WizardSection } from './wizard-types.js';

export const ONBOARD_HELP = `Usage: claw onboard [--flow quickstart|manual] [--section <name>]
       claw onboard --non-interactive --accept-risk [flags]

Sets up claw step by step: the model (with a live test before anything is saved), the
workspace, the gateway (port, bind, auth), channels (Telegram and Discord tokens checked
with the platform, WhatsApp by QR code) and the gateway as an OS service (as claw gateway
install). Run it again any time: it shows what is set and changes only what you choose.

Options:
  --flow <quickstart|manual>   quickstart keeps the gateway's settings; manual asks for them too
  --section <name>             only one part: ${SECTIONS.join(', ')}
  --non-interactive            no questions: take everything from the flags below
  --accept-risk                required with --non-interactive: the agent can run commands and edit files
  --auth-choice <choice>       openai-api-key | anthropic-api-key | custom-api-key | ollama | vllm |
                               lmstudio | llama-cpp | skip
  --openai-api-key <key>       (else OPENAI_API_KEY stays in the environment)
  --anthropic-api-key <key>    (else ANTHROPIC_API_KEY stays in the environment)
  --custom-base-url <url>      OpenAI-compatible server (custom-api-key, ollama, vllm, lmstudio)
  --custom-api-key <key>       its key, if it wants one (else CUSTOM_API_KEY)
  --custom-model-id <id>       the model the server serves
  --model <id>                 model id for OpenAI or Anthropic (default gpt-4.1 / claude-sonnet-4-20250514)
  --model-path <file.gguf>     the local model for llama-cpp
  --workspace <dir>            the agent's workspace
  --gateway-port <port>        --gateway-bind <loopback|lan>
  --gateway-auth <token|password>   --gateway-token <token>   --gateway-password <password>
  --telegram-token <token>     --discord-token <token>   (checked with the platform first)
  --skip-channels              leave channels as they are
  --install-daemon             install the gateway as a systemd user unit / launchd agent (not asked)
  --no-install-daemon, --skip-daemon   do not install it (not asked; the default with --non-interactive)
                               Where no service manager answers, that is reported and the rest
                               of the setup stands (exit code 0, as OpenClaw's)
  --skip-health                do not check the running gateway afterwards
  --json                       print a summary as JSON`;

const FLAGS = {
  help: { type: 'boolean' },
  json: { type: 'boolean' },
  flow: { type: 'string' },
  section: { type: 'string' },
  'non-interactive': { type: 'boolean' },
  'accept-risk': { type: 'boolean' },
  'auth-choice': { type: 'string' },
  'openai-api-key': { type: 'string' },
  'anthropic-api-key': { type: 'string' },
  'custom-base-url': { type: 'string' },
  'custom-api-key': { type: 'string' },
  'custom-model-id': { type: 'string' },
  model: { type: 'string' },
  'model-path': { type: 'string' },
  workspace: { type: 'string' },
  'gateway-port': { type: 'string' },
  'gateway-bind': { type: 'string' },
  'gateway-auth': { type: 'string' },
  'gateway-token': { type: 'string' },
  'gateway-password': { type: 'string' },
  'telegram-token': { type: 'string' },
  'discord-token': { type: 'string' },
  'skip-channels': { type: 'boolean' },
  'install-daemon': { type: 'boolean' },
  'no-install-daemon': { type: 'boolean' },
  'skip-daemon': { type: 'boolean' },
  'skip-health': { type: 'boolean' },
} as const;

export async function onboardCommand(argv: string[], ctx: CliContext, api: PluginApi): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}" (see claw onboard --help)`);
  const flow = values.flow as WizardFlow | undefined;
  if (flow !== undefined && flow !== 'quickstart' && flow !== 'manual')
    throw new UsageError(`--flow must be quickstart or manual (got "${flow}")`);
  const section = values.section as WizardSection | undefined;
  if (section !== undefined && !SECTIONS.includes(section))
    throw new UsageError(`--section must be one of ${SECTIONS.join(', ')} (got "${section}")`);
  const nonInteractive = values['non-interactive'] === true;
  const installDaemon = daemonFlag(values, section, nonInteractive);
  if (nonInteractive && values['accept-risk'] !== true)
    throw new UsageError(
      '--non-interactive needs --accept-risk: the agent it sets up can run commands and change files on this machine',
    );
  for (const secret of [
    'openai-api-key',
    'anthropic-api-key',
    'custom-api-key',
    'gateway-token',
    'gateway-password',
    'telegram-token',
    'discord-token',
  ] as const)
    api.kernel.redact.add(values[secret] as string | undefined);
  if (!nonInteractive && !(process.stdin.isTTY && process.stdout.isTTY))
    throw new UsageError(
      'claw onboard asks its questions in a terminal; in a script use --non-interactive --accept-risk with flags (see claw onboard --help)',
    );

  const deps: OnboardDeps = {
    ...(await kernelDeps(api, ctx.env)),
    changeConfig: async (purpose, edit) => void (await ctx.gateway.changeConfig(purpose, edit)),
    whatsappLogin: ctx.gateway.running() ? gatewayWhatsappLogin(ctx) : await localWhatsappLogin(api),
  };
  const options = {
    ...(flow ? { flow } : {}),
    ...(section ? { section } : {}),
    ...(installDaemon !== undefined ? { installDaemon } : {}),
  };

  let summary: OnboardSummary;
  if (nonInteractive) {
    const flags: OnboardFlags = {
      authChoice: values['auth-choice'],
      openaiApiKey: values['openai-api-key'],
      anthropicApiKey: values['anthropic-api-key'],
      customBaseUrl: values['custom-base-url'],
      customApiKey: values['custom-api-key'],
      customModelId: values['custom-model-id'],
      model: values.model,
      modelPath: values['model-path'],
      workspace: values.workspace,
      gatewayPort: values['gateway-port'],
      gatewayBind: values['gateway-bind'],
      gatewayAuth: values['gateway-auth'],
      gatewayToken: values['gateway-token'],
      gatewayPassword: values['gateway-password'],
      telegramToken: values['telegram-token'],
      discordToken: values['discord-token'],
      skipChannels: values['skip-channels'] === true,
    };
    try {
      summary = await runOnboarding(flagPrompter(flags, ctx.env), deps, { flow: 'manual', ...options });
    } catch (error) {
      if (!(error instanceof OnboardCheckFailed)) throw error;
      ctx.stderr.write(`claw: ${api.kernel.redact.text(error.message)}\n`);
      if (values.json)
        ctx.stdout.write(`${JSON.stringify({ ok: false, error: api.kernel.redact.text(error.message) }, null, 2)}\n`);
      return 1;
    }
  } else {
    const { terminalPrompter } = await import('./terminal-prompter.js');
    const prompter = await terminalPrompter();
    prompter.clack.intro('claw onboard');
    prompter.clack.note(
      'The assistant you are setting up can run commands and change files in its workspace.\nKeep the gateway on loopback unless you know who can reach it.',
      'Before you start',
    );
    try {
      summary = await runOnboarding(prompter, deps, options);
      prompter.clack.outro('Done.');
    } catch (error) {
      if (!(error instanceof WizardCancelled)) throw error;
      prompter.clack.cancel('Setup stopped. What was saved before this step stays; nothing else changed.');
      return 1;
    }
  }

  const health = values['skip-health'] ? undefined : await gatewayHealth(ctx, summary.daemon?.installed === true);
  if (values.json) {
    const { lines: _lines, ...rest } = summary;
    ctx.stdout.write(
      `${JSON.stringify({ ok: health?.ok !== false, configPath: api.kernel.paths.configPath, ...rest, ...(health ? { health } : {}) }, null, 2)}\n`,
    );
  } else if (nonInteractive) {
    ctx.stdout.write(`${[...summary.lines, ...(health ? [health.message] : [])].join('\n')}\n`);
  } else if (health) ctx.stdout.write(`${health.message}\n`);
  return health?.ok === false ? 1 : 0;
}

/**
 * `--install-daemon` / `--no-install-daemon` / `--skip-daemon` as the daemon step's answer.
 * Without one a terminal asks, and `--non-interactive` installs nothing (as OpenClaw's).
 */
function daemonFlag(
  values: Record<string, unknown>,
  section: WizardSection | undefined,
  nonInteractive: boolean,
): boolean | undefined {
  const install = values['install-daemon'] === true;
  const skip = values['no-install-daemon'] === true || values['skip-daemon'] === true;
  if (install && skip)
    throw new UsageError('--install-daemon and --no-install-daemon/--skip-daemon contradict each other');
  if ((install || skip) && section !== undefined && section !== 'daemon')
    throw new UsageError(
      `--${install ? 'install-daemon' : 'skip-daemon'} is for the whole setup or --section daemon, not --section ${section}`,
    );
  return install ? true : skip || nonInteractive ? false : undefined;
}

/** The running gateway's health after the changes, or a note that none runs (yet: a service just started). */
async function gatewayHealth(
  ctx: CliContext,
  serviceInstalled: boolean,
): Promise<{ ok: boolean; running: boolean; message: string }> {
  if (!ctx.gateway.running())
    return {
      ok: true,
      running: false,
      message: serviceInstalled
        ? 'The gateway service is starting: claw gateway status shows how it is doing'
        : 'The gateway is not running: start it with claw gateway',
    };
  try {
    await ctx.gateway.connect({}, (client) => client.request('health'));
    return { ok: true, running: true, message: 'The running gateway is healthy.' };
  } catch (error) {
    return {
      ok: false,
      running: true,
      message: `The running gateway did not answer its health check: ${(error as Error).message}`,
    };
  }
}

/** With a gateway running, it owns the WhatsApp connection: link through web.login.*. */
function gatewayWhatsappLogin(ctx: CliContext): OnboardDeps['whatsappLogin'] {
  const call = (method: string, params: Record<string, unknown>) =>
    ctx.gateway.connect({}, (client) =>
      client.request<ChannelLoginState>(method, { channel: 'whatsapp', ...params }, { timeoutMs: QR_WAIT_MS + 15_000 }),
    );
  return {
    start: () => call('web.login.start', { idempotencyKey: randomUUID() }),
    wait: (currentQr) => call('web.login.wait', { timeoutMs: QR_WAIT_MS, ...(currentQr ? { currentQr } : {}) }),
  };
}
