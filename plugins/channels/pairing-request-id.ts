/**
 * The id a DM pairing request goes by in OpenClaw's channels.pairing.* methods. Stable for
 * the request's life and derived from who asked and when, so it never reveals the code the
 * sender was sent (approving by code stays with that sender and `claw pairing approve`).
 */
import { createHash } from 'node:crypto';
import type { PairingRequest } from '../../sdk/channels/index.js';

export function pairingRequestId(request: PairingRequest): string {
  return createHash('sha256')
    .update(`${request.channel}\0${request.accountId}\0${request.senderId}\0${request.createdAt}`)
    .digest('base64url')
    .slice(0, 32);
}
