/**
 * A loopback fake of a Matrix homeserver's client-server API (spec v1.11), written from the
 * spec and checked against what matrix-js-sdk 37 really sends, for the Matrix channel's
 * tests. One process-local server, no federation, no encryption (rooms can be marked
 * encrypted so the channel sees `m.room.encryption`, but nothing is ever encrypted here).
 *
 * What it holds to, because a channel relies on it:
 *  - `/sync` is a real long poll over one stream position shared by every event, account
 *    data write, typing change and receipt: `next_batch` is `s<N>`; an incremental sync
 *    returns only what happened after `since` for the rooms the user is in (a room joined
 *    since comes with its full state, one left comes under `rooms.leave`), and with no news
 *    the request is held until something relevant happens or `timeout` ms pass.
 *  - `PUT …/send/{type}/{txnId}` is idempotent per (access token, txnId), and the sender's
 *    own events carry `unsigned.transaction_id` in its syncs so the SDK can match its echo.
 *  - Errors are the spec's `{errcode, error}` JSON with the statuses Synapse uses; any
 *    request can be scripted to fail (`failNext`), 429s carrying both `retry_after_ms` and a
 *    `Retry-After` header as Synapse sends them.
 *
 * The test-side helpers (`createRoom`, `invite`, `join`, `sendAs`, …) act as the other
 * users' clients would, without HTTP, and are deliberately permissive so a test can set up
 * any situation; only the HTTP surface enforces membership and power levels.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = any;

export interface MatrixEvent {
  event_id: string;
  type: string;
  sender: string;
  room_id: string;
  origin_server_ts: number;
  content: Record<string, unknown>;
  state_key?: string;
  unsigned?: Record<string, unknown>;
}

export interface FakeMatrixUser {
  userId: string;
  password?: string;
  accessToken?: string;
  displayName?: string;
}

export interface FakeHomeserverOptions {
  /** Default `claw.test`. */
  serverName?: string;
  /** Largest accepted upload (`m.upload.size`); default 50 MB. */
  maxUploadBytes?: number;
}

export interface FailReply {
  status: number;
  errcode: string;
  error?: string;
  retryAfterMs?: number;
}

const JSON_LIMIT = 1024 * 1024;
const DEFAULT_TIMELINE_LIMIT = 10;
const VERSIONS = [
  'r0.0.1',
  'r0.1.0',
  'r0.2.0',
  'r0.3.0',
  'r0.4.0',
  'r0.5.0',
  'r0.6.0',
  'r0.6.1',
  'v1.1',
  'v1.2',
  'v1.3',
  'v1.4',
  'v1.5',
  'v1.6',
  'v1.7',
  'v1.8',
  'v1.9',
  'v1.10',
  'v1.11',
];
/** What an invitee may see of a room before joining (spec: stripped state). */
const INVITE_STATE_TYPES = [
  'm.room.create',
  'm.room.name',
  'm.room.avatar',
  'm.room.topic',
  'm.room.join_rules',
  'm.room.canonical_alias',
  'm.room.encryption',
];
const RECEIPT_TYPES = new Set(['m.read', 'm.read.private', 'm.fully_read']);

interface Stored {
  event: MatrixEvent;
  pos: number;
  /** Set for events sent over HTTP, so only the sending session sees its transaction id. */
  txnId?: string;
  token?: string;
}

interface Room {
  id: string;
  alias?: string;
  timeline: Stored[];
  state: Map<string, Stored>;
  /** userId → when the typing notice lapses (ms since epoch). */
  typing: Map<string, number>;
  typingPos: number;
  receipts: Array<{ userId: string; eventId: string; receiptType: string; threadId?: string; ts: number; pos: number }>;
  /** userId → type → room account data. */
  accountData: Map<string, Map<string, { content: Json; pos: number }>>;
}

interface UserRecord {
  userId: string;
  password?: string;
  displayName?: string;
  avatarUrl?: string;
  accountData: Map<string, { content: Json; pos: number }>;
  filters: Map<string, Json>;
}

interface Session {
  token: string;
  userId: string;
  deviceId: string;
  deviceDisplayName?: string;
}

interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  params: string[];
  query: URLSearchParams;
  session?: Session;
}

interface Route {
  method: string;
  pattern: string[];
  auth: 'required' | 'optional' | 'none';
  handler: (c: Ctx) => Promise<void> | void;
}

interface SyncWaiter {
  userId: string;
  wake(): void;
  end(): void;
}

/** A spec error answer; thrown from handlers and written by the dispatcher. */
class MxError extends Error {
  constructor(
    readonly status: number,
    readonly errcode: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function letters(n: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
  return [...randomBytes(n)].map((b) => alphabet[b % alphabet.length]).join('');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeMatches(patterns: string[], type: string): boolean {
  return patterns.some((p) =>
    p.includes('*') ? new RegExp(`^${p.split('*').map(escapeRegExp).join('.*')}$`).test(type) : p === type,
  );
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The spec's RoomEventFilter subset a channel is likely to use. */
function passesFilter(filter: Json, event: MatrixEvent): boolean {
  if (!isObject(filter)) return true;
  if (Array.isArray(filter.types) && !typeMatches(filter.types as string[], event.type)) return false;
  if (Array.isArray(filter.not_types) && typeMatches(filter.not_types as string[], event.type)) return false;
  if (Array.isArray(filter.senders) && !(filter.senders as string[]).includes(event.sender)) return false;
  if (Array.isArray(filter.not_senders) && (filter.not_senders as string[]).includes(event.sender)) return false;
  return true;
}

export class FakeHomeserver {
  readonly serverName: string;
  maxUploadBytes: number;
  readonly typing: Array<{ roomId: string; userId: string; typing: boolean; timeout?: number }> = [];
  readonly receipts: Array<{
    roomId: string;
    userId: string;
    eventId: string;
    receiptType: string;
    threadId?: string;
  }> = [];
  readonly uploads = new Map<string, { contentType: string; data: Buffer; fileName?: string; uploader: string }>();
  /** Every request; `path` is the decoded pathname (room ids read `!…`, not `%21…`). */
  readonly requests: Array<{ method: string; path: string; userId?: string; query: Record<string, string> }> = [];
  /** Password logins that succeeded, in order. */
  readonly logins: Array<{ userId: string; deviceId: string; deviceDisplayName?: string }> = [];

  private server?: Server;
  private port = 0;
  private pos = 0;
  private readonly users = new Map<string, UserRecord>();
  private readonly sessions = new Map<string, Session>();
  private readonly rooms = new Map<string, Room>();
  private readonly aliases = new Map<string, string>();
  private readonly txns = new Map<string, string>();
  private readonly syncLog: Array<{ userId: string; since?: string; timeout: number }> = [];
  private readonly waiters = new Set<SyncWaiter>();
  private readonly sentListeners = new Set<(e: MatrixEvent) => void>();
  private readonly heldListeners = new Set<(userId: string) => void>();
  private readonly failures: Array<{ method?: string; path: RegExp; reply: FailReply; times: number }> = [];
  private nextFilterId = 0;
  private wakeScheduled = false;
  private readonly routeTable: Route[];

  constructor(options: FakeHomeserverOptions = {}) {
    this.serverName = options.serverName ?? 'claw.test';
    this.maxUploadBytes = options.maxUploadBytes ?? 50 * 1024 * 1024;
    this.routeTable = this.routes();
  }

  get url(): string {
    if (!this.port) throw new Error('FakeHomeserver is not started');
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<string> {
    if (!this.server) {
      this.server = createServer((req, res) => void this.dispatch(req, res));
      // Held long polls must not keep the server open at stop().
      this.server.keepAliveTimeout = 1000;
      // A restart comes back on the same port, as a homeserver does, with everything it held.
      await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
      this.port = (this.server.address() as AddressInfo).port;
    }
    return this.url;
  }

  async stop(): Promise<void> {
    for (const waiter of [...this.waiters]) waiter.end();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // ── Test-side helpers ────────────────────────────────────────────────────────────

  /** The stream position of the latest event, typing change, receipt or account data write. */
  get position(): number {
    return this.pos;
  }

  addUser(user: FakeMatrixUser): void {
    const record = this.ensureUser(user.userId);
    if (user.password !== undefined) record.password = user.password;
    if (user.displayName !== undefined) record.displayName = user.displayName;
    if (user.accessToken) {
      this.sessions.set(user.accessToken, { token: user.accessToken, userId: user.userId, deviceId: this.deviceId() });
    }
  }

  /** A new access token for `userId` (a login done on the test's side). */
  issueToken(userId: string, deviceId = this.deviceId()): string {
    this.ensureUser(userId);
    const token = this.newToken(userId);
    this.sessions.set(token, { token, userId, deviceId });
    return token;
  }

  createRoom(options: {
    creator: string;
    members?: string[];
    name?: string;
    alias?: string;
    encrypted?: boolean;
    direct?: boolean;
    /** `join_rule: public`, so anyone may join without an invite. */
    public?: boolean;
    topic?: string;
  }): string {
    const { creator } = options;
    if (options.alias && this.aliases.has(options.alias)) throw new Error(`alias ${options.alias} is taken`);
    const room = this.newRoom();
    const state = (type: string, content: Json, stateKey = '', sender = creator) =>
      this.append(room, { type, sender, content, state_key: stateKey });
    state('m.room.create', { creator, room_version: '10' });
    state('m.room.member', { membership: 'join', ...this.profileContent(creator) }, creator);
    state('m.room.power_levels', {
      users: { [creator]: 100 },
      users_default: 0,
      events: {
        'm.room.name': 50,
        'm.room.power_levels': 100,
        'm.room.history_visibility': 100,
        'm.room.canonical_alias': 50,
        'm.room.avatar': 50,
        'm.room.tombstone': 100,
        'm.room.server_acl': 100,
        'm.room.encryption': 100,
      },
      events_default: 0,
      state_default: 50,
      ban: 50,
      kick: 50,
      redact: 50,
      invite: 0,
    });
    state('m.room.join_rules', { join_rule: options.public ? 'public' : 'invite' });
    state('m.room.history_visibility', { history_visibility: 'shared' });
    if (options.alias) {
      room.alias = options.alias;
      this.aliases.set(options.alias, room.id);
      state('m.room.canonical_alias', { alias: options.alias });
    }
    if (options.name !== undefined) state('m.room.name', { name: options.name });
    if (options.topic !== undefined) state('m.room.topic', { topic: options.topic });
    if (options.encrypted) state('m.room.encryption', { algorithm: 'm.megolm.v1.aes-sha2' });
    const members = (options.members ?? []).filter((m) => m !== creator);
    const direct = options.direct ? { is_direct: true } : {};
    for (const member of members) {
      state('m.room.member', { membership: 'invite', ...this.profileContent(member), ...direct }, member);
      state('m.room.member', { membership: 'join', ...this.profileContent(member), ...direct }, member, member);
    }
    if (options.direct) {
      // What each user's client would have written on creating or joining a DM.
      this.addDirect(creator, members, room.id);
      for (const member of members) this.addDirect(member, [creator], room.id);
    }
    this.wakeSyncs();
    return room.id;
  }

  invite(roomId: string, inviter: string, invitee: string, options: { direct?: boolean } = {}): void {
    const room = this.room(roomId);
    this.append(room, {
      type: 'm.room.member',
      sender: inviter,
      state_key: invitee,
      content: {
        membership: 'invite',
        ...this.profileContent(invitee),
        ...(options.direct ? { is_direct: true } : {}),
      },
    });
    if (options.direct) this.addDirect(inviter, [invitee], roomId);
    this.wakeSyncs();
  }

  join(roomId: string, userId: string): void {
    const room = this.room(roomId);
    this.append(room, {
      type: 'm.room.member',
      sender: userId,
      state_key: userId,
      content: { membership: 'join', ...this.profileContent(userId) },
    });
    this.wakeSyncs();
  }

  leave(roomId: string, userId: string): void {
    const room = this.room(roomId);
    this.append(room, { type: 'm.room.member', sender: userId, state_key: userId, content: { membership: 'leave' } });
    this.wakeSyncs();
  }

  sendAs(userId: string, roomId: string, content: Record<string, unknown>, type = 'm.room.message'): string {
    const room = this.room(roomId);
    if (this.membershipOf(room, userId) !== 'join') {
      throw new Error(`sendAs: ${userId} is not joined to ${roomId} (${this.membershipOf(room, userId) ?? 'never'})`);
    }
    const stored = this.append(room, { type, sender: userId, content });
    this.wakeSyncs();
    return stored.event.event_id;
  }

  /** A state event sent as `userId` (no power-level check). */
  setState(userId: string, roomId: string, type: string, content: Record<string, unknown>, stateKey = ''): string {
    const room = this.room(roomId);
    const stored = this.append(room, { type, sender: userId, content, state_key: stateKey });
    this.wakeSyncs();
    return stored.event.event_id;
  }

  /** Another user's typing notice, as their client would send it. */
  setTyping(roomId: string, userId: string, typing: boolean, timeoutMs = 30_000): void {
    this.applyTyping(this.room(roomId), userId, typing, typing ? timeoutMs : undefined);
  }

  /** Another user's account data (e.g. `m.direct`), as their client would write it. */
  setAccountData(userId: string, type: string, content: Record<string, unknown>): void {
    this.ensureUser(userId).accountData.set(type, { content, pos: ++this.pos });
    this.wakeSyncs();
  }

  accountData(userId: string, type: string): Record<string, unknown> | undefined {
    return this.users.get(userId)?.accountData.get(type)?.content;
  }

  events(roomId: string): MatrixEvent[] {
    return this.room(roomId).timeline.map((s) => structuredClone(s.event));
  }

  sentBy(userId: string): MatrixEvent[] {
    const all: Stored[] = [];
    for (const room of this.rooms.values()) all.push(...room.timeline.filter((s) => s.event.sender === userId));
    return all.sort((a, b) => a.pos - b.pos).map((s) => structuredClone(s.event));
  }

  membership(roomId: string, userId: string): 'join' | 'invite' | 'leave' | undefined {
    const room = this.rooms.get(roomId);
    if (!room) return undefined;
    const m = this.membershipOf(room, userId);
    if (m === undefined) return undefined;
    return m === 'join' || m === 'invite' ? m : 'leave';
  }

  /** The room's current state event of that type and key. */
  stateEvent(roomId: string, type: string, stateKey = ''): MatrixEvent | undefined {
    const stored = this.room(roomId).state.get(stateKeyOf(type, stateKey));
    return stored && structuredClone(stored.event);
  }

  roomIdForAlias(alias: string): string | undefined {
    return this.aliases.get(alias);
  }

  upload(userId: string, data: Buffer, contentType: string, fileName?: string): string {
    const uri = `mxc://${this.serverName}/${letters(24)}`;
    this.uploads.set(uri, { contentType, data, ...(fileName !== undefined ? { fileName } : {}), uploader: userId });
    return uri;
  }

  syncRequests(userId: string): Array<{ since?: string; timeout: number }> {
    return this.syncLog
      .filter((s) => s.userId === userId)
      .map((s) => (s.since === undefined ? { timeout: s.timeout } : { since: s.since, timeout: s.timeout }));
  }

  /** Answer the next `times` requests matching (method, decoded pathname) with this error. */
  failNext(match: { method?: string; path: RegExp }, reply: FailReply, times = 1): void {
    this.failures.push({ method: match.method?.toUpperCase(), path: match.path, reply, times });
  }

  waitForSent(userId: string, predicate: (e: MatrixEvent) => boolean, timeoutMs = 5000): Promise<MatrixEvent> {
    const found = this.sentBy(userId).find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise<MatrixEvent>((resolve, reject) => {
      const listener = (e: MatrixEvent) => {
        if (e.sender !== userId || !predicate(e)) return;
        clearTimeout(timer);
        this.sentListeners.delete(listener);
        resolve(structuredClone(e));
      };
      const timer = setTimeout(() => {
        this.sentListeners.delete(listener);
        const sent = this.sentBy(userId).map((e) => `${e.type} ${JSON.stringify(e.content)}`);
        reject(
          new Error(
            `waitForSent: no event from ${userId} matching ${predicate.toString()} within ${timeoutMs} ms; ` +
              `it sent ${sent.length ? sent.join(' | ') : 'nothing'}`,
          ),
        );
      }, timeoutMs);
      this.sentListeners.add(listener);
    });
  }

  /** Long polls of this user's being held open right now. */
  heldSyncs(userId: string): number {
    return [...this.waiters].filter((w) => w.userId === userId).length;
  }

  /** Resolves once a `/sync` of this user is being held (so a test knows the poll is parked). */
  waitForHeldSync(userId: string, timeoutMs = 5000): Promise<void> {
    if (this.heldSyncs(userId)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const listener = (held: string) => {
        if (held !== userId) return;
        clearTimeout(timer);
        this.heldListeners.delete(listener);
        resolve();
      };
      const timer = setTimeout(() => {
        this.heldListeners.delete(listener);
        reject(new Error(`waitForHeldSync: no /sync of ${userId} held within ${timeoutMs} ms`));
      }, timeoutMs);
      this.heldListeners.add(listener);
    });
  }

  // ── Internals: state ─────────────────────────────────────────────────────────────

  private ensureUser(userId: string): UserRecord {
    let user = this.users.get(userId);
    if (!user) {
      user = { userId, accountData: new Map(), filters: new Map() };
      this.users.set(userId, user);
    }
    return user;
  }

  private deviceId(): string {
    return letters(10).toUpperCase();
  }

  private newToken(userId: string): string {
    const local = userId.slice(1).split(':')[0];
    return `syt_${Buffer.from(local).toString('base64url')}_${letters(20)}`;
  }

  private newRoom(): Room {
    const room: Room = {
      id: `!${letters(18)}:${this.serverName}`,
      timeline: [],
      state: new Map(),
      typing: new Map(),
      typingPos: 0,
      receipts: [],
      accountData: new Map(),
    };
    this.rooms.set(room.id, room);
    return room;
  }

  private room(roomId: string): Room {
    const room = this.rooms.get(roomId);
    if (!room) throw new Error(`no room ${roomId}`);
    return room;
  }

  private profileContent(userId: string): Record<string, string> {
    const user = this.ensureUser(userId);
    return {
      ...(user.displayName !== undefined ? { displayname: user.displayName } : {}),
      ...(user.avatarUrl !== undefined ? { avatar_url: user.avatarUrl } : {}),
    };
  }

  private addDirect(userId: string, others: string[], roomId: string): void {
    const user = this.ensureUser(userId);
    const direct: Record<string, string[]> = structuredClone(user.accountData.get('m.direct')?.content ?? {});
    for (const other of others) direct[other] = [...new Set([...(direct[other] ?? []), roomId])];
    user.accountData.set('m.direct', { content: direct, pos: ++this.pos });
  }

  private append(
    room: Room,
    partial: { type: string; sender: string; content: Json; state_key?: string },
    meta: { txnId?: string; token?: string } = {},
  ): Stored {
    this.ensureUser(partial.sender);
    const event: MatrixEvent = {
      event_id: `$${randomBytes(32).toString('base64url')}`,
      type: partial.type,
      sender: partial.sender,
      room_id: room.id,
      origin_server_ts: Date.now(),
      content: structuredClone(partial.content),
    };
    if (partial.state_key !== undefined) {
      event.state_key = partial.state_key;
      const previous = room.state.get(stateKeyOf(partial.type, partial.state_key));
      if (previous) {
        event.unsigned = {
          replaces_state: previous.event.event_id,
          prev_content: previous.event.content,
          prev_sender: previous.event.sender,
        };
      }
    }
    const stored: Stored = { event, pos: ++this.pos, ...meta };
    room.timeline.push(stored);
    if (partial.state_key !== undefined) room.state.set(stateKeyOf(partial.type, partial.state_key), stored);
    if (partial.type === 'm.room.member' && partial.content?.membership !== 'join')
      room.typing.delete(partial.state_key!);
    for (const listener of [...this.sentListeners]) listener(event);
    return stored;
  }

  private membershipOf(room: Room, userId: string): string | undefined {
    return room.state.get(stateKeyOf('m.room.member', userId))?.event.content.membership as string | undefined;
  }

  private memberEventAt(room: Room, userId: string, pos: number): Stored | undefined {
    for (let i = room.timeline.length - 1; i >= 0; i--) {
      const s = room.timeline[i];
      if (s.pos <= pos && s.event.type === 'm.room.member' && s.event.state_key === userId) return s;
    }
    return undefined;
  }

  /** The room state before the event at `pos` (all events lower than it). */
  private stateBefore(room: Room, pos: number): Map<string, Stored> {
    const state = new Map<string, Stored>();
    for (const s of room.timeline) {
      if (s.pos >= pos) break;
      if (s.event.state_key !== undefined) state.set(stateKeyOf(s.event.type, s.event.state_key), s);
    }
    return state;
  }

  private powerLevel(room: Room, userId: string): number {
    const pl = room.state.get(stateKeyOf('m.room.power_levels', ''))?.event.content as Json;
    if (!pl) return 0;
    return pl.users?.[userId] ?? pl.users_default ?? 0;
  }

  private requiredForState(room: Room, type: string): number {
    const pl = room.state.get(stateKeyOf('m.room.power_levels', ''))?.event.content as Json;
    if (!pl) return 0;
    return pl.events?.[type] ?? pl.state_default ?? 50;
  }

  private applyTyping(room: Room, userId: string, typing: boolean, timeout?: number): void {
    if (typing) room.typing.set(userId, Date.now() + (timeout ?? 30_000));
    else room.typing.delete(userId);
    room.typingPos = ++this.pos;
    this.wakeSyncs();
  }

  private typingUsers(room: Room): string[] {
    const now = Date.now();
    return [...room.typing].filter(([, until]) => until > now).map(([user]) => user);
  }

  private addReceipt(room: Room, userId: string, receiptType: string, eventId: string, threadId?: string): void {
    this.receipts.push({ roomId: room.id, userId, eventId, receiptType, ...(threadId ? { threadId } : {}) });
    const pos = ++this.pos;
    if (receiptType === 'm.fully_read') {
      // The spec keeps the fully-read marker in room account data, not in receipts.
      this.roomAccountData(room, userId).set('m.fully_read', { content: { event_id: eventId }, pos });
    } else {
      room.receipts.push({ userId, eventId, receiptType, ...(threadId ? { threadId } : {}), ts: Date.now(), pos });
    }
    this.wakeSyncs();
  }

  private roomAccountData(room: Room, userId: string): Map<string, { content: Json; pos: number }> {
    let data = room.accountData.get(userId);
    if (!data) {
      data = new Map();
      room.accountData.set(userId, data);
    }
    return data;
  }

  /** Coalesced, so a helper that appends several events wakes each long poll once. */
  private wakeSyncs(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    queueMicrotask(() => {
      this.wakeScheduled = false;
      for (const waiter of [...this.waiters]) waiter.wake();
    });
  }

  // ── Internals: /sync ─────────────────────────────────────────────────────────────

  private serialize(s: Stored, token: string | undefined, withRoomId: boolean): Json {
    const e = s.event;
    const unsigned: Json = { ...e.unsigned, age: Math.max(0, Date.now() - e.origin_server_ts) };
    if (s.txnId !== undefined && token !== undefined && s.token === token) unsigned.transaction_id = s.txnId;
    return {
      type: e.type,
      sender: e.sender,
      event_id: e.event_id,
      origin_server_ts: e.origin_server_ts,
      content: structuredClone(e.content),
      ...(e.state_key !== undefined ? { state_key: e.state_key } : {}),
      ...(withRoomId ? { room_id: e.room_id } : {}),
      unsigned,
    };
  }

  private stripped(s: Stored): Json {
    const e = s.event;
    return { type: e.type, state_key: e.state_key, sender: e.sender, content: structuredClone(e.content) };
  }

  private buildSync(session: Session, since: number | undefined, filter: Json, fullState: boolean): Json {
    const { userId, token } = session;
    const initial = since === undefined;
    const S = since ?? 0;
    const limit = Math.max(0, Number(filter?.room?.timeline?.limit ?? DEFAULT_TIMELINE_LIMIT) | 0);
    const includeLeave = filter?.room?.include_leave === true;
    const roomFilter = filter?.room;
    const join: Json = {};
    const invite: Json = {};
    const leave: Json = {};
    for (const room of this.rooms.values()) {
      if (Array.isArray(roomFilter?.rooms) && !roomFilter.rooms.includes(room.id)) continue;
      if (Array.isArray(roomFilter?.not_rooms) && roomFilter.not_rooms.includes(room.id)) continue;
      const last = this.memberEventAt(room, userId, this.pos);
      if (!last) continue;
      const now = last.event.content.membership;
      const then = initial ? undefined : this.memberEventAt(room, userId, S)?.event.content.membership;
      if (now === 'join') {
        // A room joined since `since` is new to this client: it gets it as in an initial sync.
        const roomSince = initial || then !== 'join' ? 0 : S;
        const section = this.joinedSection(room, session, roomSince, this.pos, limit, filter, fullState);
        if (roomSince === 0 || fullState || section.nonEmpty) join[room.id] = section.body;
      } else if (now === 'invite') {
        if (initial || last.pos > S) {
          const events = INVITE_STATE_TYPES.map((t) => room.state.get(stateKeyOf(t, '')))
            .filter((s): s is Stored => s !== undefined)
            .map((s) => this.stripped(s));
          const inviter = room.state.get(stateKeyOf('m.room.member', last.event.sender));
          if (inviter && inviter !== last) events.push(this.stripped(inviter));
          events.push(this.serialize(last, token, false));
          invite[room.id] = { invite_state: { events } };
        }
      } else if (initial ? includeLeave : last.pos > S) {
        const from = then === 'join' ? S : last.pos - 1;
        const candidates = room.timeline.filter(
          (s) => s.pos > from && s.pos <= last.pos && passesFilter(roomFilter?.timeline, s.event),
        );
        const timeline = limit === 0 ? [] : candidates.slice(-limit);
        leave[room.id] = {
          state: { events: [] },
          timeline: {
            events: timeline.map((s) => this.serialize(s, token, false)),
            limited: candidates.length > timeline.length,
            ...(timeline.length ? { prev_batch: `s${timeline[0].pos - 1}` } : {}),
          },
          account_data: { events: [] },
        };
      }
    }
    const user = this.ensureUser(userId);
    const accountData = [...user.accountData]
      .filter(([, v]) => initial || v.pos > S)
      .map(([type, v]) => ({ type, content: structuredClone(v.content) }));
    const empty =
      !Object.keys(join).length && !Object.keys(invite).length && !Object.keys(leave).length && !accountData.length;
    return {
      empty,
      body: {
        next_batch: `s${empty && !initial ? S : this.pos}`,
        rooms: { join, invite, leave, knock: {} },
        account_data: { events: accountData },
        presence: { events: [] },
        to_device: { events: [] },
        device_lists: { changed: [], left: [] },
        device_one_time_keys_count: {},
      },
    };
  }

  private joinedSection(
    room: Room,
    session: Session,
    roomSince: number,
    upTo: number,
    limit: number,
    filter: Json,
    fullState: boolean,
  ): { body: Json; nonEmpty: boolean } {
    const { userId, token } = session;
    const candidates = room.timeline.filter(
      (s) => s.pos > roomSince && s.pos <= upTo && passesFilter(filter?.room?.timeline, s.event),
    );
    const timeline = limit === 0 ? [] : candidates.slice(-limit);
    const limited = candidates.length > timeline.length;
    const firstPos = timeline.length ? timeline[0].pos : upTo + 1;
    let state: Stored[] = [];
    if (roomSince === 0 || fullState) {
      state = [...this.stateBefore(room, firstPos).values()];
    } else if (limited) {
      // A gap in an incremental sync: the state changes it skipped come in `state`.
      const changed = new Map<string, Stored>();
      for (const s of room.timeline) {
        if (s.pos > roomSince && s.pos < firstPos && s.event.state_key !== undefined) {
          changed.set(stateKeyOf(s.event.type, s.event.state_key), s);
        }
      }
      state = [...changed.values()];
    }
    const ephemeral: Json[] = [];
    const typing = this.typingUsers(room);
    if (room.typingPos > roomSince && (roomSince > 0 || typing.length)) {
      ephemeral.push({ type: 'm.typing', content: { user_ids: typing } });
    }
    const receipts = room.receipts.filter(
      (r) => r.pos > roomSince && (r.receiptType !== 'm.read.private' || r.userId === userId),
    );
    if (receipts.length) {
      const content: Json = {};
      for (const r of receipts) {
        const byType = (content[r.eventId] ??= {});
        const byUser = (byType[r.receiptType] ??= {});
        byUser[r.userId] = { ts: r.ts, ...(r.threadId ? { thread_id: r.threadId } : {}) };
      }
      ephemeral.push({ type: 'm.receipt', content });
    }
    const accountData = [...(room.accountData.get(userId) ?? [])]
      .filter(([, v]) => v.pos > roomSince)
      .map(([type, v]) => ({ type, content: structuredClone(v.content) }));
    const members = [...room.state.values()].filter((s) => s.event.type === 'm.room.member');
    const joined = members.filter((s) => s.event.content.membership === 'join');
    const invited = members.filter((s) => s.event.content.membership === 'invite');
    const body = {
      summary:
        roomSince === 0
          ? {
              'm.joined_member_count': joined.length,
              'm.invited_member_count': invited.length,
              'm.heroes': [...joined, ...invited]
                .map((s) => s.event.state_key!)
                .filter((u) => u !== userId)
                .slice(0, 5),
            }
          : {},
      state: { events: state.map((s) => this.serialize(s, token, false)) },
      timeline: {
        events: timeline.map((s) => this.serialize(s, token, false)),
        limited,
        ...(timeline.length ? { prev_batch: `s${timeline[0].pos - 1}` } : {}),
      },
      ephemeral: { events: ephemeral },
      account_data: { events: accountData },
      unread_notifications: { notification_count: 0, highlight_count: 0 },
    };
    return { body, nonEmpty: timeline.length + state.length + ephemeral.length + accountData.length > 0 };
  }

  // ── Internals: HTTP ──────────────────────────────────────────────────────────────

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = (req.method ?? 'GET').toUpperCase();
    let segments: string[];
    try {
      segments = url.pathname.split('/').map((s) => decodeURIComponent(s));
    } catch {
      return this.sendError(res, new MxError(400, 'M_UNRECOGNIZED', 'Invalid path encoding'));
    }
    const record: { method: string; path: string; userId?: string; query: Record<string, string> } = {
      method,
      path: segments.join('/'),
      query: Object.fromEntries(url.searchParams),
    };
    this.requests.push(record);
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (method === 'OPTIONS') {
      res.writeHead(204, {
        'Access-Control-Allow-Methods': 'GET, POST, PUT, DELETE, OPTIONS',
        'Access-Control-Allow-Headers': 'X-Requested-With, Content-Type, Authorization',
      });
      res.end();
      return;
    }
    try {
      const failure = this.failures.find((f) => (!f.method || f.method === method) && f.path.test(record.path));
      if (failure) {
        if (--failure.times <= 0) this.failures.splice(this.failures.indexOf(failure), 1);
        const { status, errcode, error, retryAfterMs } = failure.reply;
        throw new MxError(
          status,
          errcode,
          error ?? (errcode === 'M_LIMIT_EXCEEDED' ? 'Too Many Requests' : errcode),
          retryAfterMs !== undefined ? { retry_after_ms: retryAfterMs } : {},
          retryAfterMs !== undefined ? { 'Retry-After': String(Math.ceil(retryAfterMs / 1000)) } : {},
        );
      }
      if (segments[1] !== '_matrix') throw new MxError(404, 'M_UNRECOGNIZED', 'Unrecognized request');
      let rest = segments.slice(2);
      if (rest[0] === 'client' && rest[1] === 'r0') rest = ['client', 'v3', ...rest.slice(2)];
      const matching = this.routeTable.filter(
        (r) => r.pattern.length === rest.length && r.pattern.every((p, i) => p === ':' || p === rest[i]),
      );
      if (!matching.length) throw new MxError(404, 'M_UNRECOGNIZED', 'Unrecognized request');
      const route = matching.find((r) => r.method === method || (method === 'HEAD' && r.method === 'GET'));
      if (!route) throw new MxError(405, 'M_UNRECOGNIZED', 'Unrecognized request');
      const params = rest.filter((_, i) => route.pattern[i] === ':');
      const ctx: Ctx = { req, res, params, query: url.searchParams };
      if (route.auth !== 'none') {
        const session = this.authenticate(req, url.searchParams, route.auth === 'required');
        if (session) {
          ctx.session = session;
          record.userId = session.userId;
        }
      }
      await route.handler(ctx);
    } catch (err) {
      if (err instanceof MxError) return this.sendError(res, err);
      this.sendError(res, new MxError(500, 'M_UNKNOWN', `Internal server error: ${(err as Error).message}`));
    }
  }

  private authenticate(req: IncomingMessage, query: URLSearchParams, required: boolean): Session | undefined {
    const header = req.headers.authorization;
    const token = header?.match(/^Bearer\s+(\S+)$/i)?.[1] ?? query.get('access_token') ?? undefined;
    if (!token) {
      if (required) throw new MxError(401, 'M_MISSING_TOKEN', 'Missing access token');
      return undefined;
    }
    const session = this.sessions.get(token);
    if (!session) throw new MxError(401, 'M_UNKNOWN_TOKEN', 'Invalid access token passed.', { soft_logout: false });
    return session;
  }

  private send(res: ServerResponse, status: number, body: Json, headers: Record<string, string> = {}): void {
    if (res.headersSent || res.destroyed) return;
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  }

  private sendError(res: ServerResponse, err: MxError): void {
    this.send(res, err.status, { errcode: err.errcode, error: err.message, ...err.extra }, err.headers);
  }

  private readBody(req: IncomingMessage, limit: number): Promise<{ data: Buffer; tooLarge: boolean }> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let tooLarge = false;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        // Keep reading past the limit: answering mid-upload would reset the client's socket
        // instead of letting it read the 413.
        if (size > limit) tooLarge = true;
        else chunks.push(chunk);
      });
      req.on('end', () => resolve({ data: tooLarge ? Buffer.alloc(0) : Buffer.concat(chunks), tooLarge }));
      req.on('error', reject);
    });
  }

  private async readJson(c: Ctx): Promise<Record<string, any>> {
    const { data, tooLarge } = await this.readBody(c.req, JSON_LIMIT);
    if (tooLarge) throw new MxError(413, 'M_TOO_LARGE', 'Request body too large');
    const text = data.toString('utf8').trim();
    if (!text) return {};
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new MxError(400, 'M_NOT_JSON', 'Content not JSON.');
    }
    if (!isObject(body)) throw new MxError(400, 'M_BAD_JSON', 'Content must be a JSON object.');
    return body;
  }

  private knownRoom(roomId: string, userId: string): Room {
    const room = this.rooms.get(roomId);
    // Synapse does not tell outsiders whether a room exists.
    if (!room) throw new MxError(403, 'M_FORBIDDEN', `User ${userId} not in room ${roomId}`);
    return room;
  }

  private joinedRoom(roomId: string, userId: string): Room {
    const room = this.knownRoom(roomId, userId);
    if (this.membershipOf(room, userId) !== 'join') {
      throw new MxError(403, 'M_FORBIDDEN', `User ${userId} not in room ${roomId}`);
    }
    return room;
  }

  private selfOnly(c: Ctx, userId: string, what: string): void {
    if (c.session!.userId !== userId) throw new MxError(403, 'M_FORBIDDEN', `Cannot ${what} for other users.`);
  }

  private routes(): Route[] {
    const r = (method: string, path: string, auth: Route['auth'], handler: Route['handler']): Route => ({
      method,
      pattern: path.split('/'),
      auth,
      handler,
    });
    const ok = (c: Ctx, body: Json = {}) => this.send(c.res, 200, body);
    return [
      r('GET', 'client/versions', 'none', (c) => ok(c, { versions: VERSIONS, unstable_features: {} })),
      r('GET', 'client/v3/login', 'none', (c) => ok(c, { flows: [{ type: 'm.login.password' }] })),
      r('POST', 'client/v3/login', 'none', (c) => this.login(c)),
      r('POST', 'client/v3/logout', 'required', (c) => {
        this.sessions.delete(c.session!.token);
        ok(c);
      }),
      r('POST', 'client/v3/logout/all', 'required', (c) => {
        for (const [token, s] of this.sessions) if (s.userId === c.session!.userId) this.sessions.delete(token);
        ok(c);
      }),
      r('GET', 'client/v3/account/whoami', 'required', (c) =>
        ok(c, { user_id: c.session!.userId, device_id: c.session!.deviceId, is_guest: false }),
      ),
      r('GET', 'client/v3/capabilities', 'required', (c) =>
        ok(c, {
          capabilities: {
            'm.change_password': { enabled: false },
            'm.room_versions': { default: '10', available: { '10': 'stable', '11': 'stable' } },
            'm.set_displayname': { enabled: true },
            'm.set_avatar_url': { enabled: true },
            'm.3pid_changes': { enabled: false },
          },
        }),
      ),
      ...['client/v3/pushrules', 'client/v3/pushrules/'].map((path) =>
        r('GET', path, 'required', (c) =>
          ok(c, { global: { override: [], content: [], room: [], sender: [], underride: [] } }),
        ),
      ),
      r('GET', 'client/v3/sync', 'required', (c) => this.sync(c)),
      r('POST', 'client/v3/user/:/filter', 'required', async (c) => {
        this.selfOnly(c, c.params[0], 'create filters');
        const body = await this.readJson(c);
        const id = String(this.nextFilterId++);
        this.ensureUser(c.params[0]).filters.set(id, body);
        ok(c, { filter_id: id });
      }),
      r('GET', 'client/v3/user/:/filter/:', 'required', (c) => {
        this.selfOnly(c, c.params[0], 'get filters');
        const filter = this.users.get(c.params[0])?.filters.get(c.params[1]);
        if (!filter) throw new MxError(404, 'M_NOT_FOUND', 'No such filter');
        ok(c, filter);
      }),
      r('GET', 'client/v3/user/:/account_data/:', 'required', (c) => {
        this.selfOnly(c, c.params[0], 'get account data');
        const data = this.users.get(c.params[0])?.accountData.get(c.params[1]);
        if (!data) throw new MxError(404, 'M_NOT_FOUND', 'Account data not found');
        ok(c, data.content);
      }),
      r('PUT', 'client/v3/user/:/account_data/:', 'required', async (c) => {
        this.selfOnly(c, c.params[0], 'add account data');
        const body = await this.readJson(c);
        this.ensureUser(c.params[0]).accountData.set(c.params[1], { content: body, pos: ++this.pos });
        this.wakeSyncs();
        ok(c);
      }),
      r('GET', 'client/v3/user/:/rooms/:/account_data/:', 'required', (c) => {
        this.selfOnly(c, c.params[0], 'get account data');
        const data = this.rooms.get(c.params[1])?.accountData.get(c.params[0])?.get(c.params[2]);
        if (!data) throw new MxError(404, 'M_NOT_FOUND', 'Room account data not found');
        ok(c, data.content);
      }),
      r('PUT', 'client/v3/user/:/rooms/:/account_data/:', 'required', async (c) => {
        this.selfOnly(c, c.params[0], 'add account data');
        const room = this.knownRoom(c.params[1], c.params[0]);
        const body = await this.readJson(c);
        this.roomAccountData(room, c.params[0]).set(c.params[2], { content: body, pos: ++this.pos });
        this.wakeSyncs();
        ok(c);
      }),
      r('POST', 'client/v3/createRoom', 'required', (c) => this.createRoomRoute(c)),
      r('PUT', 'client/v3/rooms/:/send/:/:', 'required', (c) => this.sendRoute(c)),
      r('PUT', 'client/v3/rooms/:/state/:', 'required', (c) => this.putState(c, c.params[1], '')),
      r('PUT', 'client/v3/rooms/:/state/:/:', 'required', (c) => this.putState(c, c.params[1], c.params[2])),
      r('GET', 'client/v3/rooms/:/state', 'required', (c) => {
        const room = this.joinedRoom(c.params[0], c.session!.userId);
        ok(
          c,
          [...room.state.values()].map((s) => this.serialize(s, c.session!.token, true)),
        );
      }),
      r('GET', 'client/v3/rooms/:/state/:', 'required', (c) => this.getState(c, c.params[1], '')),
      r('GET', 'client/v3/rooms/:/state/:/:', 'required', (c) => this.getState(c, c.params[1], c.params[2])),
      r('GET', 'client/v3/rooms/:/event/:', 'required', (c) => {
        const room = this.joinedRoom(c.params[0], c.session!.userId);
        const stored = room.timeline.find((s) => s.event.event_id === c.params[1]);
        if (!stored) throw new MxError(404, 'M_NOT_FOUND', 'Event not found.');
        ok(c, this.serialize(stored, c.session!.token, true));
      }),
      r('GET', 'client/v3/rooms/:/messages', 'required', (c) => this.messages(c)),
      r('POST', 'client/v3/join/:', 'required', (c) => this.joinRoute(c, c.params[0])),
      r('POST', 'client/v3/rooms/:/join', 'required', (c) => this.joinRoute(c, c.params[0])),
      r('POST', 'client/v3/rooms/:/leave', 'required', async (c) => {
        const userId = c.session!.userId;
        const room = this.knownRoom(c.params[0], userId);
        await this.readJson(c);
        const m = this.membershipOf(room, userId);
        if (m !== 'join' && m !== 'invite') throw new MxError(403, 'M_FORBIDDEN', `User ${userId} not in room`);
        this.append(room, {
          type: 'm.room.member',
          sender: userId,
          state_key: userId,
          content: { membership: 'leave' },
        });
        this.wakeSyncs();
        ok(c);
      }),
      r('POST', 'client/v3/rooms/:/invite', 'required', async (c) => {
        const userId = c.session!.userId;
        const room = this.joinedRoom(c.params[0], userId);
        const body = await this.readJson(c);
        if (typeof body.user_id !== 'string') throw new MxError(400, 'M_MISSING_PARAM', 'Missing user_id');
        const m = this.membershipOf(room, body.user_id);
        if (m === 'join') throw new MxError(403, 'M_FORBIDDEN', `${body.user_id} is already in the room.`);
        if (m === 'ban') throw new MxError(403, 'M_FORBIDDEN', `${body.user_id} is banned from the room`);
        this.append(room, {
          type: 'm.room.member',
          sender: userId,
          state_key: body.user_id,
          content: {
            membership: 'invite',
            ...this.profileContent(body.user_id),
            ...(typeof body.reason === 'string' ? { reason: body.reason } : {}),
          },
        });
        this.wakeSyncs();
        ok(c);
      }),
      r('GET', 'client/v3/directory/room/:', 'optional', (c) => {
        const roomId = this.aliases.get(c.params[0]);
        if (!roomId) throw new MxError(404, 'M_NOT_FOUND', `Room alias ${c.params[0]} not found`);
        ok(c, { room_id: roomId, servers: [this.serverName] });
      }),
      r('GET', 'client/v3/rooms/:/joined_members', 'required', (c) => {
        const room = this.joinedRoom(c.params[0], c.session!.userId);
        const joined: Json = {};
        for (const s of room.state.values()) {
          if (s.event.type !== 'm.room.member' || s.event.content.membership !== 'join') continue;
          joined[s.event.state_key!] = {
            ...(s.event.content.displayname !== undefined ? { display_name: s.event.content.displayname } : {}),
            ...(s.event.content.avatar_url !== undefined ? { avatar_url: s.event.content.avatar_url } : {}),
          };
        }
        ok(c, { joined });
      }),
      r('GET', 'client/v3/rooms/:/members', 'required', (c) => {
        const userId = c.session!.userId;
        const room = this.knownRoom(c.params[0], userId);
        if (!this.membershipOf(room, userId)) throw new MxError(403, 'M_FORBIDDEN', `User ${userId} not in room`);
        const only = c.query.get('membership');
        const not = c.query.get('not_membership');
        const chunk = [...room.state.values()]
          .filter((s) => s.event.type === 'm.room.member')
          .filter((s) => (!only || s.event.content.membership === only) && s.event.content.membership !== not)
          .map((s) => this.serialize(s, c.session!.token, true));
        ok(c, { chunk });
      }),
      r('PUT', 'client/v3/rooms/:/typing/:', 'required', async (c) => {
        const [roomId, target] = c.params;
        const userId = c.session!.userId;
        if (target !== userId) throw new MxError(403, 'M_FORBIDDEN', 'Cannot set another user typing state');
        const room = this.joinedRoom(roomId, userId);
        const body = await this.readJson(c);
        if (typeof body.typing !== 'boolean') throw new MxError(400, 'M_BAD_JSON', 'Missing or invalid typing');
        const timeout = typeof body.timeout === 'number' ? body.timeout : undefined;
        this.typing.push({ roomId, userId, typing: body.typing, ...(timeout !== undefined ? { timeout } : {}) });
        this.applyTyping(room, userId, body.typing, timeout);
        ok(c);
      }),
      r('POST', 'client/v3/rooms/:/receipt/:/:', 'required', async (c) => {
        const [roomId, receiptType, eventId] = c.params;
        const userId = c.session!.userId;
        const room = this.joinedRoom(roomId, userId);
        const body = await this.readJson(c);
        if (!RECEIPT_TYPES.has(receiptType)) {
          throw new MxError(400, 'M_INVALID_PARAM', `Receipt type must be one of ${[...RECEIPT_TYPES].join(', ')}`);
        }
        const threadId = body.thread_id;
        if (threadId !== undefined && typeof threadId !== 'string') {
          throw new MxError(400, 'M_INVALID_PARAM', 'thread_id must be a string');
        }
        if (threadId !== undefined && receiptType === 'm.fully_read') {
          throw new MxError(400, 'M_INVALID_PARAM', 'm.fully_read receipts cannot have a thread_id');
        }
        this.addReceipt(room, userId, receiptType, eventId, threadId);
        ok(c);
      }),
      r('POST', 'client/v3/rooms/:/read_markers', 'required', async (c) => {
        const userId = c.session!.userId;
        const room = this.joinedRoom(c.params[0], userId);
        const body = await this.readJson(c);
        for (const type of ['m.fully_read', 'm.read', 'm.read.private']) {
          if (typeof body[type] === 'string') this.addReceipt(room, userId, type, body[type]);
        }
        ok(c);
      }),
      r('GET', 'client/v3/profile/:', 'optional', (c) => {
        const user = this.users.get(c.params[0]);
        if (!user) throw new MxError(404, 'M_NOT_FOUND', 'Profile was not found');
        ok(c, this.profileContent(user.userId));
      }),
      ...(['displayname', 'avatar_url'] as const).flatMap((field) => [
        r('GET', `client/v3/profile/:/${field}`, 'optional', (c) => {
          const value = this.profileContent(c.params[0])[field];
          if (!this.users.has(c.params[0]) || value === undefined) {
            throw new MxError(404, 'M_NOT_FOUND', 'Profile was not found');
          }
          ok(c, { [field]: value });
        }),
        r('PUT', `client/v3/profile/:/${field}`, 'required', async (c) => {
          this.selfOnly(c, c.params[0], `set ${field}`);
          const body = await this.readJson(c);
          if (typeof body[field] !== 'string') throw new MxError(400, 'M_BAD_JSON', `Missing ${field}`);
          const user = this.ensureUser(c.params[0]);
          if (field === 'displayname') user.displayName = body[field];
          else user.avatarUrl = body[field];
          // Synapse carries a profile change into every room the user is in.
          for (const room of this.rooms.values()) {
            if (this.membershipOf(room, user.userId) !== 'join') continue;
            this.append(room, {
              type: 'm.room.member',
              sender: user.userId,
              state_key: user.userId,
              content: { membership: 'join', ...this.profileContent(user.userId) },
            });
          }
          this.wakeSyncs();
          ok(c);
        }),
      ]),
      r('POST', 'media/v3/upload', 'required', (c) => this.uploadRoute(c)),
      ...['client/v1/media/config', 'media/v3/config'].map((path) =>
        r('GET', path, 'required', (c) => ok(c, { 'm.upload.size': this.maxUploadBytes })),
      ),
      r('GET', 'client/v1/media/download/:/:', 'required', (c) => this.download(c)),
      r('GET', 'client/v1/media/download/:/:/:', 'required', (c) => this.download(c)),
      // Thumbnails are the original here: no image processing in a fake.
      r('GET', 'client/v1/media/thumbnail/:/:', 'required', (c) => this.download(c)),
      r('GET', 'media/v3/download/:/:', 'none', (c) => this.download(c)),
      r('GET', 'media/v3/download/:/:/:', 'none', (c) => this.download(c)),
      r('GET', 'media/v3/thumbnail/:/:', 'none', (c) => this.download(c)),
    ];
  }

  private async login(c: Ctx): Promise<void> {
    const body = await this.readJson(c);
    if (body.type !== 'm.login.password') throw new MxError(400, 'M_UNKNOWN', 'Unknown login type');
    let user: unknown;
    if (isObject(body.identifier)) {
      if (body.identifier.type !== 'm.id.user') throw new MxError(400, 'M_UNKNOWN', 'Unknown login identifier type');
      user = body.identifier.user;
    } else {
      user = body.user;
    }
    if (typeof user !== 'string' || !user) throw new MxError(400, 'M_MISSING_PARAM', 'User identifier is missing');
    const userId = user.startsWith('@') ? user : `@${user.toLowerCase()}:${this.serverName}`;
    const record = this.users.get(userId);
    if (!record || record.password === undefined || body.password !== record.password) {
      throw new MxError(403, 'M_FORBIDDEN', 'Invalid username or password');
    }
    const deviceId = typeof body.device_id === 'string' && body.device_id ? body.device_id : this.deviceId();
    const token = this.newToken(userId);
    const deviceDisplayName =
      typeof body.initial_device_display_name === 'string' ? body.initial_device_display_name : undefined;
    this.sessions.set(token, { token, userId, deviceId, ...(deviceDisplayName ? { deviceDisplayName } : {}) });
    this.logins.push({ userId, deviceId, ...(deviceDisplayName ? { deviceDisplayName } : {}) });
    this.send(c.res, 200, { user_id: userId, access_token: token, device_id: deviceId, home_server: this.serverName });
  }

  private async sync(c: Ctx): Promise<void> {
    const session = c.session!;
    const sinceRaw = c.query.get('since') ?? undefined;
    const timeoutRaw = c.query.get('timeout');
    const timeout = timeoutRaw === null ? 0 : Number(timeoutRaw);
    this.syncLog.push({
      userId: session.userId,
      ...(sinceRaw !== undefined ? { since: sinceRaw } : {}),
      timeout: Number.isFinite(timeout) ? timeout : 0,
    });
    let since: number | undefined;
    if (sinceRaw !== undefined) {
      const m = /^s(\d+)$/.exec(sinceRaw);
      if (!m) throw new MxError(400, 'M_INVALID_PARAM', `Invalid stream token: ${sinceRaw}`);
      since = Number(m[1]);
    }
    if (!Number.isInteger(timeout) || timeout < 0) throw new MxError(400, 'M_INVALID_PARAM', 'Invalid timeout');
    const filterRaw = c.query.get('filter');
    let filter: Json;
    if (filterRaw) {
      if (filterRaw.trimStart().startsWith('{')) {
        try {
          filter = JSON.parse(filterRaw);
        } catch {
          throw new MxError(400, 'M_NOT_JSON', 'Filter is not JSON');
        }
      } else {
        filter = this.users.get(session.userId)?.filters.get(filterRaw);
        if (!filter) throw new MxError(400, 'M_INVALID_PARAM', `No such filter: ${filterRaw}`);
      }
    }
    const fullState = c.query.get('full_state') === 'true';
    const first = this.buildSync(session, since, filter, fullState);
    // Synapse answers at once without `since`, with full_state, or with timeout 0.
    if (since === undefined || fullState || timeout === 0 || !first.empty) {
      return this.send(c.res, 200, first.body);
    }
    await new Promise<void>((resolve) => {
      const finish = (body: Json) => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        this.send(c.res, 200, body);
        resolve();
      };
      const waiter: SyncWaiter = {
        userId: session.userId,
        wake: () => {
          const next = this.buildSync(session, since, filter, false);
          if (!next.empty) finish(next.body);
        },
        end: () => finish(first.body),
      };
      const timer = setTimeout(() => finish(first.body), timeout);
      c.res.on('close', () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve();
      });
      this.waiters.add(waiter);
      for (const listener of [...this.heldListeners]) listener(session.userId);
    });
  }

  /** Back-pagination over the same `s<N>` tokens `/sync` hands out as `prev_batch`. */
  private messages(c: Ctx): void {
    const userId = c.session!.userId;
    const room = this.knownRoom(c.params[0], userId);
    if (!this.membershipOf(room, userId)) throw new MxError(403, 'M_FORBIDDEN', `User ${userId} not in room`);
    const dir = c.query.get('dir');
    if (dir !== 'b' && dir !== 'f') throw new MxError(400, 'M_INVALID_PARAM', "dir must be 'b' or 'f'");
    const fromRaw = c.query.get('from');
    let from = dir === 'b' ? this.pos : 0;
    if (fromRaw) {
      const m = /^s(\d+)$/.exec(fromRaw);
      if (!m) throw new MxError(400, 'M_INVALID_PARAM', `Invalid from token: ${fromRaw}`);
      from = Number(m[1]);
    }
    // `to` (a token from /sync, say) ends the page there: nothing at or before it going backwards.
    const toRaw = c.query.get('to');
    const toMatch = toRaw ? /^s(\d+)$/.exec(toRaw) : undefined;
    if (toRaw && !toMatch) throw new MxError(400, 'M_INVALID_PARAM', `Invalid to token: ${toRaw}`);
    const to = toMatch ? Number(toMatch[1]) : undefined;
    const limitRaw = Number(c.query.get('limit') ?? 10);
    const limit = Number.isInteger(limitRaw) && limitRaw > 0 ? Math.min(limitRaw, 1000) : 10;
    let filter: Json;
    const filterRaw = c.query.get('filter');
    if (filterRaw) {
      try {
        filter = JSON.parse(filterRaw);
      } catch {
        throw new MxError(400, 'M_NOT_JSON', 'Filter is not JSON');
      }
    }
    const candidates = room.timeline.filter(
      (s) =>
        (dir === 'b'
          ? s.pos <= from && (to === undefined || s.pos > to)
          : s.pos > from && (to === undefined || s.pos <= to)) && passesFilter(filter, s.event),
    );
    if (dir === 'b') candidates.reverse();
    const page = candidates.slice(0, limit);
    const more = candidates.length > page.length;
    const last = page.at(-1);
    this.send(c.res, 200, {
      start: fromRaw ?? `s${from}`,
      ...(more && last ? { end: `s${dir === 'b' ? last.pos - 1 : last.pos}` } : {}),
      chunk: page.map((s) => this.serialize(s, c.session!.token, true)),
    });
  }

  private async createRoomRoute(c: Ctx): Promise<void> {
    const userId = c.session!.userId;
    const body = await this.readJson(c);
    const invites = Array.isArray(body.invite) ? body.invite.filter((u: unknown) => typeof u === 'string') : [];
    const alias = typeof body.room_alias_name === 'string' ? `#${body.room_alias_name}:${this.serverName}` : undefined;
    if (alias && this.aliases.has(alias)) throw new MxError(400, 'M_ROOM_IN_USE', 'Room alias already taken');
    const initialState: Json[] = Array.isArray(body.initial_state) ? body.initial_state : [];
    const roomId = this.createRoom({
      creator: userId,
      ...(typeof body.name === 'string' ? { name: body.name } : {}),
      ...(typeof body.topic === 'string' ? { topic: body.topic } : {}),
      ...(alias ? { alias } : {}),
      encrypted: initialState.some((s) => s?.type === 'm.room.encryption'),
      public: body.preset === 'public_chat' || (body.preset === undefined && body.visibility === 'public'),
    });
    const room = this.room(roomId);
    for (const s of initialState) {
      if (!isObject(s) || typeof s.type !== 'string' || s.type === 'm.room.encryption') continue;
      this.append(room, {
        type: s.type,
        sender: userId,
        content: s.content ?? {},
        state_key: String(s.state_key ?? ''),
      });
    }
    for (const invitee of invites) {
      this.append(room, {
        type: 'm.room.member',
        sender: userId,
        state_key: invitee,
        content: {
          membership: 'invite',
          ...this.profileContent(invitee),
          ...(body.is_direct ? { is_direct: true } : {}),
        },
      });
    }
    this.wakeSyncs();
    this.send(c.res, 200, { room_id: roomId });
  }

  private async sendRoute(c: Ctx): Promise<void> {
    const [roomId, type, txnId] = c.params;
    const session = c.session!;
    const body = await this.readJson(c);
    const key = `${session.token}\u0000${txnId}`;
    const earlier = this.txns.get(key);
    if (earlier) return this.send(c.res, 200, { event_id: earlier });
    const room = this.joinedRoom(roomId, session.userId);
    const stored = this.append(room, { type, sender: session.userId, content: body }, { txnId, token: session.token });
    this.txns.set(key, stored.event.event_id);
    this.wakeSyncs();
    this.send(c.res, 200, { event_id: stored.event.event_id });
  }

  private async putState(c: Ctx, type: string, stateKey: string): Promise<void> {
    const userId = c.session!.userId;
    const room = this.joinedRoom(c.params[0], userId);
    const body = await this.readJson(c);
    const ownMember = type === 'm.room.member' && stateKey === userId;
    if (!ownMember && this.powerLevel(room, userId) < this.requiredForState(room, type)) {
      throw new MxError(403, 'M_FORBIDDEN', `You don't have permission to post that to the room.`);
    }
    const stored = this.append(room, { type, sender: userId, content: body, state_key: stateKey });
    this.wakeSyncs();
    this.send(c.res, 200, { event_id: stored.event.event_id });
  }

  private getState(c: Ctx, type: string, stateKey: string): void {
    const room = this.joinedRoom(c.params[0], c.session!.userId);
    const stored = room.state.get(stateKeyOf(type, stateKey));
    if (!stored) throw new MxError(404, 'M_NOT_FOUND', 'Event not found.');
    this.send(
      c.res,
      200,
      c.query.get('format') === 'event' ? this.serialize(stored, c.session!.token, true) : stored.event.content,
    );
  }

  private async joinRoute(c: Ctx, target: string): Promise<void> {
    const userId = c.session!.userId;
    await this.readJson(c);
    let roomId = target;
    if (target.startsWith('#')) {
      const resolved = this.aliases.get(target);
      if (!resolved) throw new MxError(404, 'M_NOT_FOUND', `Room alias ${target} not found`);
      roomId = resolved;
    }
    const room = this.rooms.get(roomId);
    if (!room) throw new MxError(404, 'M_NOT_FOUND', 'No known servers');
    const m = this.membershipOf(room, userId);
    if (m === 'ban') throw new MxError(403, 'M_FORBIDDEN', 'You are banned from this room');
    if (m !== 'join') {
      const rule = room.state.get(stateKeyOf('m.room.join_rules', ''))?.event.content.join_rule;
      if (m !== 'invite' && rule !== 'public')
        throw new MxError(403, 'M_FORBIDDEN', 'You are not invited to this room.');
      this.append(room, {
        type: 'm.room.member',
        sender: userId,
        state_key: userId,
        content: { membership: 'join', ...this.profileContent(userId) },
      });
      this.wakeSyncs();
    }
    this.send(c.res, 200, { room_id: roomId });
  }

  private async uploadRoute(c: Ctx): Promise<void> {
    const userId = c.session!.userId;
    const { data, tooLarge } = await this.readBody(c.req, this.maxUploadBytes);
    if (tooLarge) throw new MxError(413, 'M_TOO_LARGE', 'Upload request body is too large');
    const contentType = c.req.headers['content-type'] || 'application/octet-stream';
    const fileName = c.query.get('filename') ?? undefined;
    this.send(c.res, 200, { content_uri: this.upload(userId, data, contentType, fileName) });
  }

  private download(c: Ctx): void {
    const [server, mediaId, fileName] = c.params;
    const media = this.uploads.get(`mxc://${server}/${mediaId}`);
    if (!media) throw new MxError(404, 'M_NOT_FOUND', 'Not found');
    const name = fileName ?? media.fileName;
    c.res.writeHead(200, {
      'Content-Type': media.contentType,
      'Content-Length': media.data.length,
      ...(name ? { 'Content-Disposition': `inline; filename*=utf-8''${encodeURIComponent(name)}` } : {}),
    });
    c.res.end(c.req.method === 'HEAD' ? undefined : media.data);
  }
}

function stateKeyOf(type: string, stateKey: string): string {
  return `${type}\u0000${stateKey}`;
}
