/**
 * The gateway's half of the device handshake: reading the public key a client presents and
 * checking its signature over the payload the gateway rebuilt (sdk/device-auth.ts defines
 * the payload and the key format, which clients share).
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { ED25519_SPKI_PREFIX, rawPublicKey } from '../../sdk/index.js';

/** A public key as sent on the wire (base64url raw, or PEM) → key object, or undefined if malformed. */
export function parsePublicKey(value: string): { key: KeyObject; raw: Buffer } | undefined {
  try {
    if (value.includes('BEGIN PUBLIC KEY')) {
      const key = createPublicKey(value);
      return { key, raw: rawPublicKey(value) };
    }
    const raw = Buffer.from(value, 'base64url');
    if (raw.length !== 32) return undefined;
    const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
    return { key, raw };
  } catch {
    return undefined;
  }
}

export function verifySignature(key: KeyObject, payload: string, signature: string): boolean {
  try {
    return verify(null, Buffer.from(payload, 'utf8'), key, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}
