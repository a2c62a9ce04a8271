/**
 * The gateway: port, bind and auth. Quick start asks nothing: it keeps what is set and only
 * makes sure the gateway has a secret (a generated token). Manual asks, offering the current
 * values; a token is generated unless one is given, and never shown in full.
 */
import { askText, textOf, type OnboardDeps, type OnboardSummary } from './steps.js';
import { ensureRecord, getRecord, getString, maskSecret, type AnyRecord } from './raw-config.js';
import type { Prompter } from './wizard-types.js';

export const DEFAULT_PORT = 18789;
const BINDS = [
  { value: 'loopback', label: 'Loopback (127.0.0.1)', hint: 'only this machine; recommended' },
  { value: 'lan', label: 'LAN (0.0.0.0)', hint: 'other machines on the network can connect' },
];

interface GatewayNow {
  port: number;
  bind: string;
  mode?: 'token' | 'password' | 'none';
  secret?: string;
}

function gatewayNow(raw: AnyRecord, env: OnboardDeps['env']): GatewayNow {
  const gateway = getRecord(raw, 'gateway');
  const auth = getRecord(raw, 'gateway', 'auth');
  const token = getString(auth, 'token') ?? env.OPENCLAW_GATEWAY_TOKEN?.trim();
  const password = getString(auth, 'password') ?? env.OPENCLAW_GATEWAY_PASSWORD?.trim();
  const declared = getString(auth, 'mode') as GatewayNow['mode'];
  const mode = declared ?? (password && !token ? 'password' : token ? 'token' : undefined);
  return {
    port: typeof gateway?.port === 'number' && gateway.port > 0 ? gateway.port : DEFAULT_PORT,
    bind: getString(gateway, 'bind') ?? 'loopback',
    mode,
    secret: mode === 'password' ? password : mode === 'token' ? token : undefined,
  };
}

export async function gatewaySection(
  p: Prompter,
  deps: OnboardDeps,
  summary: OnboardSummary,
  quick: boolean,
): Promise<void> {
  const generate = deps.generateToken;
  if (!generate) {
    summary.lines.push('Gateway: the gateway plugin is off (nothing to set up)');
    return;
  }
  const now = gatewayNow(deps.raw(), deps.env);
  const described = `port ${now.port}, ${now.bind}, ${now.mode ? `${now.mode} auth` : 'no auth yet'}`;
  const change =
    !quick &&
    textOf(
      await p.ask({
        id: 'gateway.configure',
        type: 'select',
        title: 'Gateway',
        message: `The gateway: ${described}`,
        options: [
          { value: 'keep', label: 'Keep these settings' },
          { value: 'change', label: 'Change port, bind or auth' },
        ],
        initialValue: 'keep',
      }),
    ) === 'change';

  if (!change) {
    if (!now.mode) {
      // The gateway never runs open: a secret now, so `claw dashboard` and clients can sign in.
      const token = generate();
      deps.redact(token);
      await saveGateway(deps, { auth: { mode: 'token', token } });
      summary.lines.push(`Gateway: port ${now.port}, ${now.bind}, a new token (claw dashboard signs in with it)`);
      summary.gateway = { port: now.port, bind: now.bind, auth: 'token' };
    } else {
      summary.lines.push(`Gateway: ${described} (kept)`);
      summary.gateway = { port: now.port, bind: now.bind, auth: now.mode };
    }
    return;
  }

  const port = Number(
    await askText(
      p,
      { id: 'gateway.port', type: 'text', title: 'Gateway', message: 'Port', initialValue: String(now.port) },
      (value) =>
        /^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 65535 ? undefined : 'give a port from 1 to 65535',
    ),
  );
  const bind =
    textOf(
      await p.ask({
        id: 'gateway.bind',
        type: 'select',
        title: 'Gateway',
        message: 'Who can reach the gateway?',
        options: BINDS,
        initialValue: BINDS.some((option) => option.value === now.bind) ? now.bind : 'loopback',
      }),
    ) || 'loopback';
  const authOptions = [
    ...(now.mode === 'token' || now.mode === 'password'
      ? [{ value: 'keep', label: `Keep the current ${now.mode}${now.secret ? ` (${maskSecret(now.secret)})` : ''}` }]
      : []),
    { value: 'token', label: 'Token', hint: 'generated, or one you give' },
    { value: 'password', label: 'Password' },
  ];
  const mode = textOf(
    await p.ask({
      id: 'gateway.auth',
      type: 'select',
      title: 'Gateway',
      message: 'How do clients sign in?',
      options: authOptions,
      initialValue: authOptions[0]!.value,
    }),
  );
  let auth: AnyRecord | undefined;
  if (mode === 'token') {
    const given = await askText(
      p,
      {
        id: 'gateway.token',
        type: 'text',
        title: 'Gateway',
        message: 'Gateway token',
        sensitive: true,
        placeholder: 'leave empty to generate one',
      },
      (value) => (!value || value.length >= 16 ? undefined : 'a token needs at least 16 characters'),
    );
    const token = given || generate();
    deps.redact(token);
    auth = { mode: 'token', token };
  } else if (mode === 'password') {
    const password = await askText(
      p,
      { id: 'gateway.password', type: 'text', title: 'Gateway', message: 'Gateway password', sensitive: true },
      (value) => (value.length >= 8 ? undefined : 'a password needs at least 8 characters'),
    );
    deps.redact(password);
    auth = { mode: 'password', password };
  }
  await saveGateway(deps, { port, bind, ...(auth ? { auth } : {}) });
  const authMode = (auth?.mode as string | undefined) ?? now.mode ?? 'token';
  summary.gateway = { port, bind, auth: authMode };
  summary.lines.push(
    `Gateway: port ${port}, ${bind}, ${authMode} auth${auth ? ' (new)' : ''}; a running gateway restarts to apply it`,
  );
}

async function saveGateway(deps: OnboardDeps, change: { port?: number; bind?: string; auth?: AnyRecord }) {
  await deps.changeConfig('claw onboard: gateway', (next) => {
    const gateway = ensureRecord(next, 'gateway');
    if (change.port !== undefined) gateway.port = change.port;
    if (change.bind !== undefined) gateway.bind = change.bind;
    if (change.auth) {
      const auth = ensureRecord(gateway, 'auth');
      // One secret per mode: the other one would be a credential nobody uses.
      delete auth.token;
      delete auth.password;
      Object.assign(auth, change.auth);
    }
  });
}
