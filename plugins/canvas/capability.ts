/**
 * Capabilities for the canvas host: a node loads canvas pages without headers (a WebView, an
 * iframe), so the URL itself carries the authority, scoped to one agent's canvas folder and
 * expiring. A capability is `v1.<agentId>.<expires, epoch seconds>.<HMAC-SHA256>`, keyed by a
 * secret this gateway keeps owner-only in its state dir; nothing else about the gateway (its
 * token, its cookies) ever reaches a page.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, rmSync, writeSync, fsyncSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../../sdk/index.js';

export const CANVAS_PATH = '/__openclaw__/canvas';
const VERSION = 'v1';
const AGENT_ID = /^[a-z0-9_][a-z0-9_-]{0,63}$/;

export type CapabilityCheck =
  { ok: true; agentId: string; expiresAtMs: number } | { ok: false; status: 401 | 403; reason: string };

/**
 * The gateway's canvas secret, made on first use. Created by linking a finished temp file into
 * place, so two processes racing to make it agree on one secret (the loser reads the winner's).
 */
export function loadCanvasSecret(stateDir: string): Buffer {
  const dir = join(stateDir, 'canvas');
  const file = join(dir, 'capability-secret');
  try {
    return decodeSecret(readFileSync(file, 'utf8'), file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  ensurePrivateDir(dir);
  const temp = join(dir, `.capability-secret.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(temp, 'wx', PRIVATE_FILE_MODE);
  try {
    writeSync(fd, `${randomBytes(32).toString('base64url')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(temp, { force: true });
  }
  return decodeSecret(readFileSync(file, 'utf8'), file);
}

function decodeSecret(text: string, file: string): Buffer {
  const secret = Buffer.from(text.trim(), 'base64url');
  if (secret.length < 32) throw new Error(`${file} does not hold a canvas secret (delete it to make a new one)`);
  return secret;
}

function sign(secret: Buffer, agentId: string, expiresSec: number): string {
  return createHmac('sha256', secret).update(`canvas|${VERSION}|${agentId}|${expiresSec}`).digest('base64url');
}

export function mintCapability(secret: Buffer, agentId: string, ttlMs: number, now = Date.now()): string {
  if (!AGENT_ID.test(agentId)) throw new Error(`agent id "${agentId}" cannot be put in a canvas capability`);
  const expiresSec = Math.ceil((now + ttlMs) / 1000);
  return `${VERSION}.${agentId}.${expiresSec}.${sign(secret, agentId, expiresSec)}`;
}

export function checkCapability(secret: Buffer, capability: string, now = Date.now()): CapabilityCheck {
  const parts = capability.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION || !AGENT_ID.test(parts[1]!) || !/^\d{1,12}$/.test(parts[2]!)) {
    return {
      ok: false,
      status: 401,
      reason:
        'canvas URLs need a capability (/__openclaw__/canvas/<capability>/<file>); this one is missing or malformed. Ask the agent to present the page again for a fresh URL.',
    };
  }
  const [, agentId, expires, signature] = parts as [string, string, string, string];
  const expected = Buffer.from(sign(secret, agentId, Number(expires)));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return {
      ok: false,
      status: 403,
      reason:
        'canvas capability signature does not match: it was not minted by this gateway (or the gateway secret changed). Present the page again for a fresh URL.',
    };
  }
  const expiresAtMs = Number(expires) * 1000;
  if (expiresAtMs <= now) {
    return {
      ok: false,
      status: 403,
      reason: `canvas capability expired at ${new Date(expiresAtMs).toISOString()}. Present the page again for a fresh URL.`,
    };
  }
  return { ok: true, agentId, expiresAtMs };
}

/** The gateway-relative URL of `relPath` (a "/"-separated path inside the canvas folder). */
export function capabilityPath(capability: string, relPath: string): string {
  const encoded = relPath
    .split('/')
    .filter(Boolean)
    .map((segment) => encodeURIComponent(segment))
    .join('/');
  return `${CANVAS_PATH}/${capability}/${encoded}`;
}
