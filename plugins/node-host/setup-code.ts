/**
 * OpenClaw's pairing setup code, as `openclaw qr` and `claw qr` print it: base64url of the
 * JSON `{url, bootstrapToken, urls?, expiresAtMs?, tlsFingerprint?}`, optionally written as an
 * `oc-pair://<code>` URL. The bootstrap token is single-use; the gateway answers it with a
 * device token, which is kept instead.
 */
export interface SetupCode {
  url: string;
  bootstrapToken: string;
  expiresAtMs?: number;
  tlsFingerprint?: string;
}

const PREFIX = 'oc-pair://';

export function decodeSetupCode(input: string, now: number = Date.now()): SetupCode {
  const trimmed = input.trim();
  const code = trimmed.toLowerCase().startsWith(PREFIX) ? trimmed.slice(PREFIX.length) : trimmed;
  if (!code || !/^[A-Za-z0-9_-]+$/.test(code)) throw new Error('--pair: not a setup code or oc-pair:// URL');
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(code, 'base64url').toString('utf8'));
  } catch {
    throw new Error('--pair: not a setup code or oc-pair:// URL');
  }
  const value = (decoded && typeof decoded === 'object' ? decoded : {}) as Record<string, unknown>;
  const url = typeof value.url === 'string' ? value.url.trim() : '';
  const bootstrapToken = typeof value.bootstrapToken === 'string' ? value.bootstrapToken.trim() : '';
  if (!/^wss?:\/\//.test(url) || !bootstrapToken) throw new Error('--pair: the setup code has no gateway URL or token');
  if (value.expiresAtMs !== undefined) {
    if (typeof value.expiresAtMs !== 'number' || !Number.isSafeInteger(value.expiresAtMs))
      throw new Error('--pair: the setup code has an invalid expiry');
    if (value.expiresAtMs <= now) throw new Error('--pair: the setup code has expired; ask for a new one (claw qr)');
  }
  return {
    url,
    bootstrapToken,
    ...(typeof value.expiresAtMs === 'number' ? { expiresAtMs: value.expiresAtMs } : {}),
    ...(typeof value.tlsFingerprint === 'string' ? { tlsFingerprint: value.tlsFingerprint } : {}),
  };
}
