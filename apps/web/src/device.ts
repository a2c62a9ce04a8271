/**
 * This browser's device identity: an Ed25519 key pair made with WebCrypto and kept in
 * IndexedDB (the private key is not extractable, so page scripts can sign with it but
 * never read it). The device id is the SHA-256 of the raw public key, as the gateway
 * computes it. The gateway admits a browser without an identity only from this machine;
 * from elsewhere it needs the identity to pair. Browsers without Ed25519 in WebCrypto (or
 * pages not in a secure context, where WebCrypto is missing) get no identity.
 */
import { randomId } from './dom.js';

export interface DeviceIdentity {
  deviceId: string;
  /** base64url of the raw 32-byte public key, as sent in `connect`. */
  publicKey: string;
  sign(payload: string): Promise<string>;
}

const DB_NAME = 'claw';
const STORE = 'keys';
const KEY = 'device';

export function base64Url(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = '';
  for (const byte of view) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function idb<T>(db: IDBDatabase, mode: IDBTransactionMode, work: (store: IDBObjectStore) => IDBRequest): Promise<T> {
  return new Promise((resolve, reject) => {
    const request = work(db.transaction(STORE, mode).objectStore(STORE));
    request.onsuccess = () => resolve(request.result as T);
    request.onerror = () => reject(request.error);
  });
}

async function storedKeys(): Promise<CryptoKeyPair> {
  let db: IDBDatabase | undefined;
  try {
    db = await openDb();
    const existing = await idb<CryptoKeyPair | undefined>(db, 'readonly', (store) => store.get(KEY));
    if (existing?.privateKey && existing.publicKey) return existing;
  } catch {
    // No IndexedDB (some private modes): an identity for this page load only.
  }
  const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify'])) as CryptoKeyPair;
  if (db) await idb(db, 'readwrite', (store) => store.put(pair, KEY)).catch(() => undefined);
  return pair;
}

/** The identity, or undefined when this browser cannot make one. */
export async function loadDeviceIdentity(): Promise<DeviceIdentity | undefined> {
  if (!globalThis.isSecureContext || !crypto.subtle) return undefined;
  try {
    const pair = await storedKeys();
    const raw = await crypto.subtle.exportKey('raw', pair.publicKey);
    return {
      deviceId: hex(await crypto.subtle.digest('SHA-256', raw)),
      publicKey: base64Url(raw),
      sign: async (payload) =>
        base64Url(await crypto.subtle.sign({ name: 'Ed25519' }, pair.privateKey, new TextEncoder().encode(payload))),
    };
  } catch {
    return undefined; // Ed25519 not supported by this browser's WebCrypto.
  }
}

/**
 * The text a device signs for `connect` (format v3): the gateway rebuilds it from the
 * connect params and checks the signature, so every field must match what is sent.
 */
export function deviceAuthPayload(fields: {
  deviceId: string;
  clientId: string;
  clientMode: string;
  role: string;
  scopes: readonly string[];
  signedAtMs: number;
  token: string;
  nonce: string;
  platform: string;
  deviceFamily?: string;
}): string {
  const lower = (value?: string) => (value ?? '').trim().toLowerCase();
  return [
    'v3',
    fields.deviceId,
    fields.clientId,
    fields.clientMode,
    fields.role,
    fields.scopes.join(','),
    String(fields.signedAtMs),
    fields.token,
    fields.nonce,
    lower(fields.platform),
    lower(fields.deviceFamily),
  ].join('|');
}

/** This tab's instance id (presence lists each tab once). */
export const INSTANCE_ID = `web-${randomId(8)}`;
