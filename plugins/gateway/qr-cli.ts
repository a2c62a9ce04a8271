/**
 * `claw qr`: OpenClaw's `openclaw qr` for claw's setup codes — the running gateway mints one
 * (device.pair.setupCode) and this prints it with a terminal QR. The code pairs one node for ten
 * minutes: `claw node run --pair <code>` or `openclaw node run --pair <code>` on the node.
 */
import type { CliContext } from '../../sdk/index.js';
import { parseFlags, UsageError } from '../../sdk/cli.js';

const HELP = `Usage: claw qr [--url <ws(s)://host:port>] [--json | --setup-code-only] [--no-ascii]

Makes a setup code that pairs one node with this gateway (single use, valid 10 minutes) and
prints it with a QR code. On the node: claw node run --pair <code>  (or openclaw node run --pair).

  --url, --public-url <url>   where the node should reach the gateway (default: from gateway.bind;
                              a loopback-only gateway needs it). ws:// only for this machine or a LAN.
  --json                      {setupCode, gatewayUrl, auth, urlSource, access, setupId, expiresAtMs}
  --setup-code-only           print just the code
  --no-ascii                  leave out the QR
  --token, --password, --timeout <ms>   how to reach the running gateway`;

const FLAGS = {
  url: { type: 'string' },
  'public-url': { type: 'string' },
  json: { type: 'boolean' },
  'setup-code-only': { type: 'boolean' },
  'no-ascii': { type: 'boolean' },
  token: { type: 'string' },
  password: { type: 'string' },
  timeout: { type: 'string' },
  help: { type: 'boolean' },
} as const;

interface SetupCodeResult {
  setupId: string;
  expiresAtMs: number;
  setupCode: string;
  gatewayUrl: string;
  auth: string;
  urlSource: string;
  access: string;
}

export async function qr(argv: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS);
  if (values.help) {
    ctx.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}" (see claw qr --help)`);
  if (values.url !== undefined && values['public-url'] !== undefined)
    throw new UsageError('give the URL once: --url or --public-url');
  const publicUrl = values.url ?? values['public-url'];
  const flags = { token: values.token, password: values.password, timeout: values.timeout };
  const result = await ctx.gateway.connect(flags, (gw) =>
    gw.request<SetupCodeResult>('device.pair.setupCode', {
      includeQr: false,
      bootstrapProfile: 'node',
      ...(publicUrl !== undefined ? { publicUrl } : {}),
    }),
  );
  const { setupCode, gatewayUrl, auth, urlSource, access, setupId, expiresAtMs } = result;
  if (values.json) {
    const payload = { setupCode, gatewayUrl, auth, urlSource, access, setupId, expiresAtMs };
    ctx.stdout.write(`${JSON.stringify(payload, null, 2)}\n`);
    return 0;
  }
  if (values['setup-code-only']) {
    ctx.stdout.write(`${setupCode}\n`);
    return 0;
  }
  const lines = [
    'Pairing QR',
    'Pair a node with it: claw node run --pair <setup code> (openclaw node run --pair works too).',
  ];
  if (!values['no-ascii']) lines.push('', (await terminalQr(setupCode)).trimEnd());
  const minutes = Math.max(0, Math.round((expiresAtMs - Date.now()) / 60_000));
  lines.push(
    '',
    `Setup code: ${setupCode}`,
    `Gateway:    ${gatewayUrl}`,
    `Auth:       ${auth}`,
    `Access:     ${access}`,
    `Expires:    in ${minutes} minutes (${new Date(expiresAtMs).toISOString()}); it works once`,
    `Source:     ${urlSource}`,
    '',
    'The node is paired as soon as it connects with the code; see it with: claw nodes status',
  );
  ctx.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

async function terminalQr(text: string): Promise<string> {
  const loaded = await import('qrcode');
  // A CommonJS module: Node hands it over as the default export, bundlers as named ones.
  const { toString } = loaded.default ?? loaded;
  return toString(text, { type: 'terminal', small: true, errorCorrectionLevel: 'L' });
}
