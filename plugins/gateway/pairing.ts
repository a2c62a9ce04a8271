/**
 * Paired devices and pending pairing requests, kept in <stateDir>/devices/pairing.json
 * (written atomically) so approvals survive restarts. Changes are made in memory and
 * written by `flush()`, which batches everything changed so far into one write: a burst
 * of a thousand new devices costs a handful of writes, and the event loop never waits on
 * the disk. Whoever acknowledges a change (a hello-ok carrying a device token, an
 * approval) awaits `flush()` first. Device tokens are stored only as
 * SHA-256 hashes: the token itself exists on the device and in one hello-ok frame.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import type { Redactor } from '../../sdk/index.js';
import { BatchedJsonFile } from './batched-json-file.js';
import { generateDeviceToken } from './auth.js';

export interface RoleGrant {
  scopes: string[];
  tokenHash?: string;
  tokenIssuedAt?: string;
}

export interface PairedDevice {
  deviceId: string;
  publicKey: string;
  displayName?: string;
  platform?: string;
  clientId?: string;
  roles: Record<string, RoleGrant>;
  approvedAt: string;
  /** "loopback" for automatic local approval, otherwise the approving operator's device or "cli". */
  approvedBy: string;
  lastSeenAt?: string;
  remoteAddress?: string;
  /** For role node: what an operator approved it may be sent (its command surface). */
  surface?: NodeSurface;
  /** For role node: a declared surface wider than the approved one, waiting for an operator. */
  surfaceRequest?: SurfaceRequest;
  /** For role node: its latest node.host.stats report. */
  lastHostStats?: unknown;
}

export interface NodeSurface {
  commands: string[];
  caps: string[];
  approvedAt: string;
  approvedBy: string;
}

export interface SurfaceRequest {
  requestId: string;
  commands: string[];
  caps: string[];
  createdAt: string;
}

export interface PairingRequest {
  requestId: string;
  deviceId: string;
  publicKey: string;
  role: string;
  scopes: string[];
  displayName?: string;
  platform?: string;
  clientId?: string;
  remoteAddress?: string;
  createdAt: string;
  expiresAt: string;
}

interface StoreFile {
  version: 1;
  paired: Record<string, PairedDevice>;
  pending: Record<string, PairingRequest>;
}

export class PairingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PairingError';
  }
}

export function pairingFile(stateDir: string): string {
  return join(stateDir, 'devices', 'pairing.json');
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === new Set(b).size && b.every((value) => a.includes(value));

const hash = (token: string) => createHash('sha256').update(token).digest('hex');

export class PairingStore extends BatchedJsonFile<StoreFile> {
  /** `redact`: the kernel's, which every frame passes (a token it would mask is never issued). */
  constructor(
    file: string,
    private readonly redact: Pick<Redactor, 'text'>,
    private readonly requestTtlMs = 5 * 60_000,
    private readonly now: () => number = Date.now,
  ) {
    super(
      file,
      () => ({ version: 1, paired: {}, pending: {} }),
      (parsed) => Boolean(parsed.paired && parsed.pending),
      (message) => new PairingError(`pairing store ${message}`),
    );
  }

  /**
   * Re-read from disk (another process, such as the CLI with the gateway down, may have
   * written it). Unwritten changes are written first, never dropped.
   */
  async reload(): Promise<void> {
    await this.reread();
  }

  private save(): void {
    this.changed();
  }

  private prune(): boolean {
    let changed = false;
    for (const [id, request] of Object.entries(this.data.pending)) {
      if (Date.parse(request.expiresAt) <= this.now()) {
        delete this.data.pending[id];
        changed = true;
      }
    }
    return changed;
  }

  device(deviceId: string): PairedDevice | undefined {
    return this.data.paired[deviceId];
  }

  listPaired(): PairedDevice[] {
    return Object.values(this.data.paired);
  }

  listPending(): PairingRequest[] {
    if (this.prune()) this.save();
    return Object.values(this.data.pending).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** A pending request for this device and role, reused while it is still open. */
  request(fields: Omit<PairingRequest, 'requestId' | 'createdAt' | 'expiresAt'>): {
    request: PairingRequest;
    created: boolean;
  } {
    this.prune();
    const existing = Object.values(this.data.pending).find(
      (r) => r.deviceId === fields.deviceId && r.role === fields.role,
    );
    if (existing) {
      existing.scopes = [...new Set([...existing.scopes, ...fields.scopes])];
      this.save();
      return { request: existing, created: false };
    }
    const created = new Date(this.now());
    const request: PairingRequest = {
      ...fields,
      requestId: randomUUID(),
      createdAt: created.toISOString(),
      expiresAt: new Date(created.getTime() + this.requestTtlMs).toISOString(),
    };
    this.data.pending[request.requestId] = request;
    this.save();
    return { request, created: true };
  }

  /** Approve a pending request (or, with `direct`, a device seen on loopback). */
  approve(requestId: string, approvedBy: string): PairedDevice {
    this.prune();
    const request = this.data.pending[requestId];
    if (!request)
      throw new PairingError(
        `no pending pairing request "${requestId}" (it may have expired; requests last 5 minutes)`,
      );
    delete this.data.pending[requestId];
    const device = this.grant(request, approvedBy);
    this.save();
    return device;
  }

  approveDirect(
    fields: Omit<PairingRequest, 'requestId' | 'createdAt' | 'expiresAt'>,
    approvedBy: string,
  ): PairedDevice {
    const device = this.grant(fields, approvedBy);
    this.save();
    return device;
  }

  private grant(
    fields: Omit<PairingRequest, 'requestId' | 'createdAt' | 'expiresAt'>,
    approvedBy: string,
  ): PairedDevice {
    const existing = this.data.paired[fields.deviceId];
    const device: PairedDevice = existing ?? {
      deviceId: fields.deviceId,
      publicKey: fields.publicKey,
      roles: {},
      approvedAt: new Date(this.now()).toISOString(),
      approvedBy,
    };
    device.displayName = fields.displayName ?? device.displayName;
    device.platform = fields.platform ?? device.platform;
    device.clientId = fields.clientId ?? device.clientId;
    const grant = device.roles[fields.role] ?? { scopes: [] };
    grant.scopes = [...new Set([...grant.scopes, ...fields.scopes])].sort();
    device.roles[fields.role] = grant;
    this.data.paired[device.deviceId] = device;
    return device;
  }

  reject(requestId: string): PairingRequest {
    const request = this.data.pending[requestId];
    if (!request) throw new PairingError(`no pending pairing request "${requestId}"`);
    delete this.data.pending[requestId];
    this.save();
    return request;
  }

  remove(deviceId: string): PairedDevice {
    const device = this.data.paired[deviceId];
    if (!device) throw new PairingError(`no paired device "${deviceId}"`);
    delete this.data.paired[deviceId];
    this.save();
    return device;
  }

  rename(deviceId: string, displayName: string): PairedDevice {
    const device = this.data.paired[deviceId];
    if (!device) throw new PairingError(`no paired device "${deviceId}"`);
    device.displayName = displayName;
    this.save();
    return device;
  }

  /** Take one role from a device (its token with it); a device left with no role is forgotten. */
  removeRole(deviceId: string, role: string): PairedDevice {
    const device = this.data.paired[deviceId];
    if (!device?.roles[role]) throw new PairingError(`device "${deviceId}" is not paired for role "${role}"`);
    delete device.roles[role];
    if (role === 'node') {
      delete device.surface;
      delete device.surfaceRequest;
      delete device.lastHostStats;
    }
    if (Object.keys(device.roles).length === 0) delete this.data.paired[deviceId];
    this.save();
    return device;
  }

  /**
   * A node connected declaring this surface: when it is not within the approved one, the pending
   * surface request (kept, with its id, while the declared set is unchanged). Undefined when the
   * approved surface covers it.
   */
  requestSurface(
    deviceId: string,
    commands: string[],
    caps: string[],
  ): { request: SurfaceRequest; created: boolean } | undefined {
    const device = this.data.paired[deviceId];
    if (!device) return undefined;
    const approved = device.surface;
    // Declaring nothing asks for nothing: there is no surface to approve.
    const covered =
      (commands.length === 0 && caps.length === 0) ||
      (approved !== undefined &&
        commands.every((c) => approved.commands.includes(c)) &&
        caps.every((c) => approved.caps.includes(c)));
    if (covered) {
      if (device.surfaceRequest) {
        delete device.surfaceRequest;
        this.save();
      }
      return undefined;
    }
    const existing = device.surfaceRequest;
    if (existing && sameSet(existing.commands, commands) && sameSet(existing.caps, caps))
      return { request: existing, created: false };
    const request: SurfaceRequest = {
      requestId: randomUUID(),
      commands: [...commands].sort(),
      caps: [...caps].sort(),
      createdAt: new Date(this.now()).toISOString(),
    };
    device.surfaceRequest = request;
    this.save();
    return { request, created: true };
  }

  /** The paired device whose pending surface request this is. */
  surfaceRequestOwner(requestId: string): PairedDevice | undefined {
    return Object.values(this.data.paired).find((d) => d.surfaceRequest?.requestId === requestId);
  }

  /** Approve a node's pending surface request: its declared commands and caps become its surface. */
  approveSurface(requestId: string, approvedBy: string): PairedDevice {
    const device = this.surfaceRequestOwner(requestId);
    if (!device?.surfaceRequest) throw new PairingError(`no pending node surface request "${requestId}"`);
    this.setSurface(device.deviceId, device.surfaceRequest.commands, device.surfaceRequest.caps, approvedBy);
    return device;
  }

  /** Set a paired node's approved surface directly (setup codes approve the first declared one). */
  setSurface(deviceId: string, commands: string[], caps: string[], approvedBy: string): PairedDevice {
    const device = this.data.paired[deviceId];
    if (!device) throw new PairingError(`no paired device "${deviceId}"`);
    device.surface = {
      commands: [...new Set(commands)].sort(),
      caps: [...new Set(caps)].sort(),
      approvedAt: new Date(this.now()).toISOString(),
      approvedBy,
    };
    delete device.surfaceRequest;
    this.save();
    return device;
  }

  rejectSurface(requestId: string): PairedDevice {
    const device = this.surfaceRequestOwner(requestId);
    if (!device) throw new PairingError(`no pending node surface request "${requestId}"`);
    delete device.surfaceRequest;
    this.save();
    return device;
  }

  /** Keep a node's latest host stats on its record. */
  recordHostStats(deviceId: string, stats: unknown): void {
    const device = this.data.paired[deviceId];
    if (!device) return;
    device.lastHostStats = stats;
    this.save();
  }

  /** Issue a new device token for a role the device holds, replacing any previous one. */
  issueToken(deviceId: string, role: string): string {
    const grant = this.data.paired[deviceId]?.roles[role];
    if (!grant) throw new PairingError(`device "${deviceId}" is not paired for role "${role}"`);
    const token = generateDeviceToken(this.redact);
    grant.tokenHash = hash(token);
    grant.tokenIssuedAt = new Date(this.now()).toISOString();
    this.save();
    return token;
  }

  revokeToken(deviceId: string, role: string): boolean {
    const grant = this.data.paired[deviceId]?.roles[role];
    if (!grant?.tokenHash) return false;
    delete grant.tokenHash;
    delete grant.tokenIssuedAt;
    this.save();
    return true;
  }

  /** Constant-time check of a presented device token. */
  verifyToken(deviceId: string, role: string, token: string): boolean {
    const expected = this.data.paired[deviceId]?.roles[role]?.tokenHash;
    if (!expected) return false;
    return timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(hash(token), 'hex'));
  }

  /** Record a connect; written at most once a minute per device so reconnect storms cost no I/O. */
  touch(deviceId: string, remoteAddress?: string): void {
    const device = this.data.paired[deviceId];
    if (!device) return;
    const previous = device.lastSeenAt ? Date.parse(device.lastSeenAt) : 0;
    const moved = remoteAddress !== undefined && remoteAddress !== device.remoteAddress;
    if (!moved && this.now() - previous < 60_000) return;
    device.lastSeenAt = new Date(this.now()).toISOString();
    if (remoteAddress) device.remoteAddress = remoteAddress;
    this.save();
  }
}

/**
 * A paired device as OpenClaw's clients read it (roles and scopes as lists, a summary per
 * token, times in ms), with claw's own fields beside; never a token hash.
 */
export function publicDevice(device: PairedDevice, connected = false) {
  const grants = Object.entries(device.roles);
  const ms = (iso: string | undefined) => (iso === undefined ? null : Date.parse(iso));
  return {
    deviceId: device.deviceId,
    publicKey: device.publicKey,
    displayName: device.displayName ?? null,
    platform: device.platform ?? null,
    clientId: device.clientId ?? null,
    role: grants[0]?.[0] ?? null,
    roles: grants.map(([role]) => role),
    scopes: [...new Set(grants.flatMap(([, grant]) => grant.scopes))],
    tokens: grants
      .filter(([, grant]) => grant.tokenHash)
      .map(([role, grant]) => ({
        role,
        scopes: grant.scopes,
        createdAtMs: ms(grant.tokenIssuedAt),
        rotatedAtMs: null,
        revokedAtMs: null,
        lastUsedAtMs: null,
      })),
    remoteIp: device.remoteAddress ?? null,
    createdAtMs: Date.parse(device.approvedAt),
    approvedAtMs: Date.parse(device.approvedAt),
    lastSeenAtMs: ms(device.lastSeenAt),
    connected,
    approvedAt: device.approvedAt,
    approvedBy: device.approvedBy,
    lastSeenAt: device.lastSeenAt ?? null,
    remoteAddress: device.remoteAddress ?? null,
  };
}

/** A pending pairing request as OpenClaw's clients read it (roles as a list, `ts`), with claw's fields. */
export function publicRequest(request: PairingRequest) {
  return {
    ...request,
    roles: [request.role],
    remoteIp: request.remoteAddress ?? null,
    silent: false,
    isRepair: false,
    ts: Date.parse(request.createdAt),
  };
}
