/**
 * The only module that touches Baileys. It turns an account's AuthStore into Baileys'
 * multi-file auth state (same file layout as `useMultiFileAuthState`, but every write
 * atomic and owner-only), opens a socket with `makeWASocket`, and hands the plugin the
 * small WaSocket surface it works with. Baileys is imported on first use — a gateway
 * without WhatsApp configured never loads it — and installed on demand like every
 * optional heavy dependency (manifest `runtimeDependencies`, the "runtime-deps" service).
 */
import type { Logger, RuntimeDependency, RuntimeDepImportOptions, RuntimeDeps } from '../../sdk/index.js';
import { CREDS_FILE, type AuthStore } from './auth-store.js';
import type { SocketFactory, SocketOptions, WaMessage, WaSocket } from './types.js';

/** Same as the manifest's runtimeDependencies entry. */
export const BAILEYS: RuntimeDependency = { name: 'baileys', version: '7.0.0-rc14', approxSizeMb: 30 };

type AnyRecord = Record<string, any>;
type Baileys = AnyRecord;

let baileysModule: Promise<Baileys> | undefined;

function loadBaileys(deps: RuntimeDeps, options: RuntimeDepImportOptions): Promise<Baileys> {
  baileysModule ??= deps
    .import<Baileys>(BAILEYS, { retryCommand: 'claw plugins enable channel-whatsapp', ...options })
    .then(
      (mod) => (typeof mod.makeWASocket === 'function' ? mod : (mod.default as Baileys)),
      (error: unknown) => {
        baileysModule = undefined;
        throw error;
      },
    );
  return baileysModule;
}

/** Baileys logs through a pino-shaped object; ours forwards warnings and errors only. */
function baileysLogger(logger: Logger): AnyRecord {
  const text = (obj: unknown, msg?: string) =>
    msg ?? (typeof obj === 'string' ? obj : (JSON.stringify(obj)?.slice(0, 500) ?? ''));
  const make = (): AnyRecord => ({
    level: 'warn',
    child: () => make(),
    trace: () => {},
    debug: () => {},
    info: () => {},
    warn: (obj: unknown, msg?: string) => logger.debug(`baileys: ${text(obj, msg)}`),
    error: (obj: unknown, msg?: string) => logger.warn(`baileys: ${text(obj, msg)}`),
  });
  return make();
}

/** Baileys' auth state over the account's AuthStore. */
async function authState(
  baileys: Baileys,
  auth: AuthStore,
): Promise<{ state: AnyRecord; saveCreds: () => Promise<void> }> {
  const { BufferJSON, initAuthCreds, proto } = baileys;
  await auth.open();
  const read = async (name: string) => {
    const text = await auth.read(name);
    return text === undefined ? null : JSON.parse(text, BufferJSON.reviver);
  };
  const write = (name: string, value: unknown) => auth.write(name, JSON.stringify(value, BufferJSON.replacer));
  const creds = (await read(CREDS_FILE)) ?? initAuthCreds();
  return {
    state: {
      creds,
      keys: {
        get: async (type: string, ids: string[]) => {
          const data: AnyRecord = {};
          await Promise.all(
            ids.map(async (id) => {
              let value = await read(`${type}-${id}.json`);
              if (type === 'app-state-sync-key' && value) value = proto.Message.AppStateSyncKeyData.fromObject(value);
              data[id] = value;
            }),
          );
          return data;
        },
        set: async (data: Record<string, Record<string, unknown>>) => {
          const tasks: Array<Promise<void>> = [];
          for (const [category, entries] of Object.entries(data)) {
            for (const [id, value] of Object.entries(entries))
              tasks.push(value ? write(`${category}-${id}.json`, value) : auth.remove(`${category}-${id}.json`));
          }
          await Promise.all(tasks);
        },
      },
    },
    saveCreds: () => write(CREDS_FILE, creds),
  };
}

/** Baileys' default, named here for errors that say which server could not be reached. */
const DEFAULT_WA_WEB_SOCKET = 'wss://web.whatsapp.com/ws/chat';

export interface BaileysFactoryOptions extends Pick<RuntimeDepImportOptions, 'install'> {
  /** WhatsApp Web's WebSocket (default Baileys' wss://web.whatsapp.com/ws/chat). */
  waWebSocketUrl?: string;
}

/** The socket factory the plugin uses outside tests; Baileys comes from the host's "runtime-deps" service. */
export function baileysSocketFactory(runtimeDeps: RuntimeDeps, deps: BaileysFactoryOptions = {}): SocketFactory {
  return async (options: SocketOptions): Promise<WaSocket> => {
    const baileys = await loadBaileys(runtimeDeps, deps.install === undefined ? {} : { install: deps.install });
    const logger = baileysLogger(options.logger);
    const { state, saveCreds } = await authState(baileys, options.auth);
    const sock = baileys.makeWASocket({
      auth: { creds: state.creds, keys: baileys.makeCacheableSignalKeyStore(state.keys, logger) },
      logger,
      browser: baileys.Browsers.ubuntu('claw'),
      // Stay "offline" so the phone keeps showing notifications; no history backfill.
      markOnlineOnConnect: false,
      syncFullHistory: false,
      shouldSyncHistoryMessage: () => false,
      getMessage: async () => undefined,
      ...(deps.waWebSocketUrl ? { waWebSocketUrl: deps.waWebSocketUrl } : {}),
    });
    return {
      ev: sock.ev,
      get user() {
        return sock.user;
      },
      sendMessage: (jid, content, sendOptions) => sock.sendMessage(jid, content, sendOptions),
      sendPresenceUpdate: (type, jid) => sock.sendPresenceUpdate(type, jid),
      readMessages: (keys) => sock.readMessages(keys),
      end: (error) => sock.end(error),
      logout: () => sock.logout(),
      downloadMedia: (message: WaMessage) =>
        baileys.downloadMediaMessage(message, 'buffer', {}, { logger, reuploadRequest: sock.updateMediaMessage }),
      saveCreds,
      host: new URL(deps.waWebSocketUrl ?? DEFAULT_WA_WEB_SOCKET).host,
    };
  };
}
