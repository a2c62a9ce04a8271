/**
 * Device identity for the gateway handshake: an ed25519 key pair whose device id is the
 * SHA-256 (hex) of the raw public key. A client signs the server's `connect.challenge`
 * nonce inside a pipe-joined payload (v3 binds platform and device family, v2 does not);
 * the gateway rebuilds the payload and verifies. Keys travel as base64url of the raw
 * 32-byte key. This is the client's half and the payload format both ends share (the
 * GatewayClient signs with it); verifying is the gateway plugin's (device-verify.ts).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeJsonAtomic } from './fs.js';

export interface DeviceIdentity {
  deviceId: string;
  publicKeyPem: string;
  privateKeyPem: string;
}

/** DER prefix of an ed25519 SubjectPublicKeyInfo; the raw key is the 32 bytes after it. */
export const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function base64UrlEncode(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

export function rawPublicKey(publicKeyPem: string): Buffer {
  const der = createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' });
  return der.subarray(ED25519_SPKI_PREFIX.length);
}

export function deviceIdFor(raw: Uint8Array): string {
  return createHash('sha256').update(raw).digest('hex');
}

export function generateDeviceIdentity(): DeviceIdentity {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return {
    deviceId: deviceIdFor(rawPublicKey(publicKeyPem)),
    publicKeyPem,
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** Read the identity at `file`, creating it (mode 0600) on first use. */
export function loadOrCreateDeviceIdentity(file: string): DeviceIdentity {
  try {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as DeviceIdentity;
    if (stored.deviceId === deviceIdFor(rawPublicKey(stored.publicKeyPem))) return stored;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new Error(
        `device identity ${file} is unreadable (${(error as Error).message}); move it away to create a new one`,
      );
    }
  }
  const identity = generateDeviceIdentity();
  writeJsonAtomic(file, identity);
  return identity;
}

export interface DeviceAuthFields {
  deviceId: string;
  clientId: string;
  clientMode: string;
  role: string;
  scopes: readonly string[];
  signedAtMs: number;
  token?: string | null;
  nonce: string;
  platform?: string | null;
  deviceFamily?: string | null;
}

const lower = (value?: string | null) => (value ?? '').trim().toLowerCase();

export function deviceAuthPayload(fields: DeviceAuthFields, version: 'v2' | 'v3' = 'v3'): string {
  const parts = [
    version,
    fields.deviceId,
    fields.clientId,
    fields.clientMode,
    fields.role,
    fields.scopes.join(','),
    String(fields.signedAtMs),
    fields.token ?? '',
    fields.nonce,
  ];
  if (version === 'v3') parts.push(lower(fields.platform), lower(fields.deviceFamily));
  return parts.join('|');
}

export function signPayload(privateKeyPem: string, payload: string): string {
  return base64UrlEncode(sign(null, Buffer.from(payload, 'utf8'), createPrivateKey(privateKeyPem)));
}
