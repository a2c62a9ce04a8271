/**
 * The gateway as an OS service (systemd user unit / launchd agent), through the gateway
 * plugin's `gateway-daemon` service — the same install as `claw gateway install`. Where no
 * service manager answers (a container, an SSH session without a user bus) the step
 * defaults to no and, asked anyway, says to run the gateway in the foreground; like
 * OpenClaw's, it then installs nothing and the rest of the setup stands.
 */
import { DEFAULT_PORT } from './gateway-section.js';
import { getRecord } from './raw-config.js';
import type { OnboardDeps, OnboardSummary } from './steps.js';
import type { Prompter } from './wizard-types.js';

const TITLE = 'Gateway service';

/** `preset`: the answer the flags gave (`--install-daemon`, `--skip-daemon`); the step is asked without one. */
export async function daemonSection(
  p: Prompter,
  deps: OnboardDeps,
  summary: OnboardSummary,
  preset?: boolean,
): Promise<void> {
  const daemon = deps.daemon;
  if (!daemon) {
    if (preset) summary.lines.push(`${TITLE}: the gateway plugin is off (nothing to install)`);
    return;
  }
  if (preset === false) {
    skipped(summary);
    return;
  }
  const unavailable = await p.working('Looking for a service manager…', () => daemon.unavailable());
  const install =
    preset ??
    (await p.ask({
      id: 'daemon.install',
      type: 'confirm',
      title: TITLE,
      message: 'Install the gateway as a service (systemd user unit / launchd)?',
      initialValue: unavailable === undefined,
    })) === true;
  if (!install) {
    skipped(summary);
    return;
  }

  let result: { done: boolean; message: string };
  if (unavailable !== undefined) {
    result = {
      done: false,
      message: `No service manager here: run \`claw gateway\` in the foreground (${unavailable}).`,
    };
  } else {
    try {
      result = await p.working('Installing the gateway service…', () => daemon.install({ port: servicePort(deps) }));
    } catch (error) {
      result = { done: false, message: `The gateway service could not be installed: ${(error as Error).message}` };
    }
    // Its words are `claw gateway install`'s; here the way on is that command.
    if (!result.done)
      result.message += '\nSee claw gateway status; claw gateway install --force replaces a different unit.';
  }
  await p.ask({ id: 'daemon.result', type: 'note', title: TITLE, message: result.message });
  summary.daemon = { installed: result.done, message: result.message };
  summary.lines.push(
    result.done
      ? `${TITLE}: installed (claw gateway status shows it)`
      : `${TITLE}: not installed — ${result.message.split('\n')[0]}`,
  );
}

function skipped(summary: OnboardSummary): void {
  summary.daemon = { installed: false, message: 'not installed' };
  summary.lines.push(`${TITLE}: not installed (later: claw gateway install; or run claw gateway in the foreground)`);
}

/**
 * The port as the config file has it now (the gateway section may just have changed it),
 * else OPENCLAW_GATEWAY_PORT, else the default — not the port of a gateway run with
 * `--port`, which is what the gateway's own settings would say inside it.
 */
function servicePort(deps: OnboardDeps): number {
  const configured = getRecord(deps.raw(), 'gateway')?.port;
  if (typeof configured === 'number') return configured;
  const fromEnv = deps.env.OPENCLAW_GATEWAY_PORT?.trim();
  return fromEnv && /^\d+$/.test(fromEnv) ? Number(fromEnv) : DEFAULT_PORT;
}
