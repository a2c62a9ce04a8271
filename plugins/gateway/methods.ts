/**
 * Methods the gateway itself provides: health, status, presence, config.*, plugins.list,
 * logs.tail, gateway.identity.get and device pairing. Each declares its params schema,
 * the operator scope it needs, and whether it changes state (then it needs an
 * idempotencyKey). Methods of other plugins arrive the same way through the registry.
 */
import {
  composeConfigSchema,
  ErrorCodes,
  formatIssue,
  formatPath,
  getPath,
  hasPath,
  parseJson5,
  ProtocolError,
  redactConfig,
  REDACTED,
  type ConfigIssue,
  type ConfigSnapshot,
  type JsonSchema,
  type ChannelPlugin,
  type PathSegment,
  type PluginApi,
  type PluginRecord,
} from '../../sdk/index.js';
import {
  configHash,
  ConfigConflictError,
  mergePatch,
  type ReloadResult,
  disablePlugin,
  enablePlugin,
  PluginManageError,
  describePlugin,
} from '../../sdk/config.js';
import { publicDevice, PairingError } from './pairing.js';
import type { GatewayRuntime } from './runtime.js';
import { tailLog } from './tail.js';
import { unknownChannelProblem } from './send-channel.js';
import { channelSummaryLines, openClawChannelStatus, withOpenClawLogFields, withTimeout } from './openclaw-shapes.js';

const EMPTY: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };
const REQUEST_ID: JsonSchema = { type: 'object', additionalProperties: false, required: ['requestId'], properties: { requestId: { type: 'string', minLength: 1 } } };
const DEVICE_ROLE: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['deviceId'],
  properties: { deviceId: { type: 'string', minLength: 1 }, role: { enum: ['operator', 'node'] } },
};
const WHOLE_CONFIG: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    raw: { type: 'string', description: 'The whole config as JSON5 text' },
    config: { type: 'object', description: 'The whole config as an object' },
    baseHash: { type: 'string', description: 'config.get hash this edit is based on (required once the file exists); refused if the file changed since' },
    restartDelayMs: { type: 'integer', minimum: 0, maximum: 60_000 },
  },
};

function invalid(message: string, details?: unknown): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message, details);
}

/** Config paths a manifest marks sensitive, on top of secret-looking key names. */
function sensitivity(runtime: GatewayRuntime) {
  const hints = composeUiHints(runtime.api.kernel.plugins());
  const sensitive = new Set(Object.entries(hints).filter(([, hint]) => hint.sensitive).map(([path]) => path));
  return (path: readonly PathSegment[]) => sensitive.has(path.join('.'));
}

/** Values sent back as the redaction marker keep what the file already has. */
function restoreRedacted(next: unknown, current: unknown, at: PathSegment[] = []): unknown {
  if (next === REDACTED) {
    if (!hasPath(current, at)) throw invalid(`${formatPath(at)} holds the redaction marker; send the real value`);
    return getPath(current, at);
  }
  if (Array.isArray(next)) return next.map((item, index) => restoreRedacted(item, current, [...at, index]));
  if (next !== null && typeof next === 'object') {
    return Object.fromEntries(Object.entries(next).map(([key, value]) => [key, restoreRedacted(value, current, [...at, key])]));
  }
  return next;
}

function parseWhole(params: { raw?: string; config?: Record<string, unknown> }, what: string): Record<string, unknown> {
  if ((params.raw === undefined) === (params.config === undefined)) throw invalid(`${what} needs exactly one of params.raw (JSON5 text) or params.config (object)`);
  if (params.config !== undefined) return params.config;
  let value: unknown;
  try {
    value = parseJson5(params.raw!, 'params.raw');
  } catch (error) {
    throw invalid((error as Error).message);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('params.raw must hold a JSON5 object');
  return value as Record<string, unknown>;
}

export function registerMethods(api: PluginApi, runtime: GatewayRuntime): void {
  const kernel = api.kernel;
  const configFile = kernel.configFile;

  /**
   * Under the config lock: check the base hash, edit the file as it is now, keep redacted
   * secrets, refuse new errors, write atomically, tell clients, then hot-reload or restart.
   */
  async function writeConfig(method: string, edit: (current: ConfigSnapshot) => Record<string, unknown>, baseHash: string | null | undefined, mayRestart = true) {
    const path = kernel.paths.configPath;
    try {
      return await configFile.locked(
        `gateway ${method}`,
        async (write) => {
          const current = configFile.read();
          // As OpenClaw: an edit of an existing file must say which revision it is based on.
          if (baseHash === undefined && current.exists) {
            throw invalid(`${method} needs params.baseHash (the hash from config.get) because ${path} exists; read it with config.get and retry`, { code: 'CONFIG_BASE_HASH_REQUIRED' });
          }
          const raw = restoreRedacted(edit(current), current.raw) as Record<string, unknown>;
          const errors = await introducedErrors(raw, current);
          if (errors.length > 0) {
            throw invalid(`config is invalid: ${errors.map(formatIssue).join('; ')}`, { code: 'INVALID_CONFIG', issues: errors });
          }
          write(raw);
          const hash = configHash(path);
          kernel.protocol.emit('config.changed', { path, hash, ts: Date.now() });
          const reload: ReloadResult = runtime.reloader.written(current, configFile.read(), hash, mayRestart);
          api.logger.info(`config written (${method}): ${reload.message}`, { path, paths: reload.changedPaths });
          return { path, hash, reload, restartRequired: reload.restartRequired && !reload.restartScheduled, message: reload.message };
        },
        baseHash ?? undefined,
      );
    } catch (error) {
      // By code, not instanceof: the host's writer may have loaded its own copy of the SDK module.
      const conflict = error as Partial<ConfigConflictError> | undefined;
      if (conflict?.code === 'CONFIG_CONFLICT') throw invalid(conflict.message!, { code: 'CONFIG_CONFLICT', currentHash: conflict.currentHash });
      throw error;
    }
  }

  /** Errors `raw` has that the current file does not (a pre-existing plugin problem does not block every edit). */
  async function introducedErrors(raw: Record<string, unknown>, current: ConfigSnapshot): Promise<ConfigIssue[]> {
    const errors = (await configFile.check(raw)).filter((issue: ConfigIssue) => issue.level === 'error');
    if (errors.length === 0 || !current.exists || current.issues.some((issue) => issue.path === '<file>')) return errors;
    const key = (issue: ConfigIssue) => `${issue.path}\u0000${issue.message}`;
    const known = new Set((await configFile.check(current.raw)).map(key));
    return errors.filter((issue) => !known.has(key(issue)));
  }

  api.registerGatewayMethod('health', {
    // OpenClaw's clients ask for a probe; claw's snapshot is always read live.
    params: { type: 'object', additionalProperties: false, properties: { probe: { type: 'boolean' } } },
    description: 'Gateway health snapshot (any authenticated connection).',
    handler: () => runtime.health(),
  });

  api.registerGatewayMethod('status', {
    params: { type: 'object', additionalProperties: false, properties: { includeChannelSummary: { type: 'boolean' } } },
    scope: 'operator.read',
    description: 'Gateway summary: listener, connections, plugins, lanes (with includeChannelSummary: one line per channel account, as OpenClaw).',
    handler: async (params: { includeChannelSummary?: boolean }, ctx) => {
      const status = runtime.status(ctx.scopes?.includes('operator.admin') ?? false);
      if (!params.includeChannelSummary) return status;
      return { ...status, channelSummary: channelSummaryLines(await kernel.channels.status()) };
    },
  });

  api.registerGatewayMethod('system-presence', {
    params: EMPTY,
    scope: 'operator.read',
    description: 'Connected (and recently disconnected) clients; the caller receives presence events from then on.',
    handler: (_params, ctx) => {
      if (ctx.connId) runtime.server?.wantPresence(ctx.connId);
      return runtime.server?.presence.snapshot() ?? [];
    },
  });

  api.registerGatewayMethod('gateway.identity.get', {
    params: EMPTY,
    scope: 'operator.read',
    description: "The gateway's own device identity.",
    handler: () => runtime.identity(),
  });

  api.registerGatewayMethod('plugins.list', {
    params: EMPTY,
    scope: 'operator.read',
    description: 'Every plugin found, with status and the reason for it.',
    handler: () => ({ plugins: kernel.plugins().map(describePlugin) }),
  });

  api.registerGatewayMethod('logs.tail', {
    params: {
      type: 'object',
      additionalProperties: false,
      properties: {
        cursor: { type: 'integer', minimum: 0 },
        limit: { type: 'integer', minimum: 1, maximum: 5000 },
        maxBytes: { type: 'integer', minimum: 1024, maximum: 4194304 },
      },
    },
    scope: 'operator.read',
    description: 'Lines of the gateway log file after a cursor (or the last ones).',
    // Lines are masked when written; this also covers lines written before a secret was configured.
    handler: (params: { cursor?: number; limit?: number; maxBytes?: number }) => {
      const tail = tailLog(runtime.logFile, params);
      return kernel.redact.value({ ...tail, lines: tail.lines.map(withOpenClawLogFields) });
    },
  });

  api.registerGatewayMethod('config.get', {
    params: EMPTY,
    scope: 'operator.read',
    description: 'The config file (secrets redacted), its hash for conflict checks, and its problems.',
    handler: () => {
      const snapshot = configFile.read();
      return {
        path: snapshot.path,
        exists: snapshot.exists,
        hash: configHash(snapshot.path),
        config: redactConfig(snapshot.raw, sensitivity(runtime)),
        issues: snapshot.issues,
      };
    },
  });

  api.registerGatewayMethod('config.schema', {
    params: EMPTY,
    scope: 'operator.read',
    description: 'JSON Schema of the whole config, with UI hints from plugin manifests.',
    handler: () => ({ schema: composeConfigSchema(kernel.plugins()), uiHints: composeUiHints(kernel.plugins()), version: runtime.version }),
  });

  api.registerGatewayMethod('config.set', {
    params: WHOLE_CONFIG,
    scope: 'operator.admin',
    sideEffect: 'optional',
    description: 'Replace the whole config (validated, written atomically); safe changes apply at once, others per gateway.reload.mode.',
    handler: (params: { raw?: string; config?: Record<string, unknown>; baseHash?: string }) => {
      const next = parseWhole(params, 'config.set');
      return writeConfig('config.set', () => next, params.baseHash);
    },
  });

  api.registerGatewayMethod('config.patch', {
    params: {
      type: 'object',
      additionalProperties: false,
      properties: {
        patch: { type: 'object', description: 'JSON merge patch (null deletes a key)' },
        raw: { type: 'string', description: 'The merge patch as JSON5 text' },
        baseHash: { type: 'string', description: 'config.get hash this edit is based on (required once the file exists); refused if the file changed since' },
      },
    },
    scope: 'operator.admin',
    sideEffect: 'optional',
    description: 'Merge a partial update into the config (JSON merge patch semantics).',
    handler: (params: { patch?: Record<string, unknown>; raw?: string; baseHash?: string }) => {
      const patch = parseWhole({ raw: params.raw, config: params.patch }, 'config.patch');
      // Merged into the file as it is under the lock, so patches of different keys never undo each other.
      return writeConfig(
        'config.patch',
        (current) => {
          if (current.issues.some((issue) => issue.path === '<file>')) {
            throw invalid(`the config file cannot be parsed (${current.issues[0]!.message}); replace it with config.set instead`);
          }
          return mergePatch(current.raw, patch) as Record<string, unknown>;
        },
        params.baseHash,
      );
    },
  });

  api.registerGatewayMethod('config.apply', {
    params: WHOLE_CONFIG,
    scope: 'operator.admin',
    sideEffect: 'optional',
    description: 'Replace the whole config and restart the gateway to apply it.',
    handler: async (params: { raw?: string; config?: Record<string, unknown>; baseHash?: string; restartDelayMs?: number }) => {
      const next = parseWhole(params, 'config.apply');
      // It restarts whatever changed: the reload only reports (and hot-applies, should the restart be impossible).
      const written = await writeConfig('config.apply', () => next, params.baseHash, false);
      const delayMs = params.restartDelayMs ?? 250;
      const scheduled = runtime.requestRestart?.('config.apply', delayMs) ?? false;
      const message = scheduled ? 'The gateway is restarting to apply the new config.' : written.message;
      return { ...written, restartRequired: !scheduled && written.restartRequired, message, restart: { scheduled, delayMs: scheduled ? delayMs : null } };
    },
  });

  for (const on of [true, false]) {
    api.registerGatewayMethod(on ? 'plugins.enable' : 'plugins.disable', {
      params: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
      scope: 'operator.admin',
      sideEffect: true,
      description: on ? 'Turn a plugin on (an exclusive slot switches holders); takes effect on restart.' : 'Turn a plugin off; takes effect on restart.',
      handler: async (params: { id: string }) => {
        const record = kernel.plugins().find((candidate) => candidate.id === params.id);
        if (!record) throw invalid(`no plugin "${params.id}" is installed`);
        let notes: string[] = [];
        const written = await writeConfig(
          on ? 'plugins.enable' : 'plugins.disable',
          (current) => {
            const raw = structuredClone(current.raw);
            try {
              notes = on ? enablePlugin(raw, record) : disablePlugin(raw, record);
            } catch (error) {
              if (error instanceof PluginManageError) throw invalid(error.message);
              throw error;
            }
            return raw;
          },
          null, // edits the file as it is under the lock
        );
        return { ...written, id: params.id, enabled: on, notes };
      },
    });
  }

  // ── Channels ─────────────────────────────────────────────────────────────────

  api.registerGatewayMethod('channels.status', {
    params: {
      type: 'object',
      additionalProperties: false,
      properties: {
        channel: { type: 'string', minLength: 1 },
        // claw reads each running channel's live state on every call, so a probe is what it
        // always does; timeoutMs bounds that read.
        probe: { type: 'boolean' },
        timeoutMs: { type: 'integer', minimum: 1, maximum: 600_000 },
      },
    },
    scope: 'operator.read',
    description: 'Channels declared by enabled plugins, whether they are configured, and each account’s state (also in OpenClaw’s channelAccounts shape).',
    handler: async (params: { channel?: string; timeoutMs?: number }) => {
      const read = kernel.channels.status();
      const all = params.timeoutMs === undefined ? await read : await withTimeout(read, params.timeoutMs, 'channels.status');
      return openClawChannelStatus(all.filter((channel) => params.channel === undefined || channel.id === params.channel));
    },
  });

  // QR login and logout (OpenClaw's names), forwarded to the channel plugin that has them.
  const loginChannel = async (id: string | undefined, needs: 'loginStart' | 'logout'): Promise<ChannelPlugin> => {
    const ids = id ? [id] : kernel.capabilities.list('channel').map((info) => info.name);
    for (const candidate of ids) {
      const channel = (await kernel.capabilities.find('channel', candidate).catch(() => undefined)) as ChannelPlugin | undefined;
      if (channel?.[needs]) return channel;
    }
    throw invalid(id ? `channel "${id}" has no ${needs === 'logout' ? 'logout' : 'QR login'} (is its plugin enabled?)` : 'no enabled channel logs in by QR code');
  };
  const LOGIN_PARAMS = { channel: { type: 'string', minLength: 1 }, accountId: { type: 'string', minLength: 1 }, timeoutMs: { type: 'integer', minimum: 1, maximum: 300_000 } } as const;
  const loginFailed = (error: unknown) => new ProtocolError(ErrorCodes.UNAVAILABLE, (error as Error).message);
  api.registerGatewayMethod('web.login.start', {
    params: { type: 'object', additionalProperties: false, properties: { ...LOGIN_PARAMS, force: { type: 'boolean' } } },
    scope: 'operator.admin',
    sideEffect: true,
    description: 'Start linking a channel account by QR code (WhatsApp): answers with the QR (qr, qrDataUrl) or connected.',
    handler: async (params: { channel?: string; accountId?: string; force?: boolean; timeoutMs?: number }) => {
      const channel = await loginChannel(params.channel, 'loginStart');
      return { channel: channel.id, ...(await channel.loginStart!({ ...params }).catch((error: unknown) => Promise.reject(loginFailed(error)))) };
    },
  });
  api.registerGatewayMethod('web.login.wait', {
    params: { type: 'object', additionalProperties: false, properties: { ...LOGIN_PARAMS, currentQr: { type: 'string' }, sessionKey: { type: 'string' } } },
    scope: 'operator.admin',
    description: 'Wait until the account is linked or shows a new QR (after currentQr), up to timeoutMs.',
    handler: async (params: { channel?: string; accountId?: string; timeoutMs?: number; currentQr?: string }) => {
      const channel = await loginChannel(params.channel, 'loginStart');
      return { channel: channel.id, ...(await channel.loginWait!({ ...params }).catch((error: unknown) => Promise.reject(loginFailed(error)))) };
    },
  });
  api.registerGatewayMethod('channels.logout', {
    params: { type: 'object', additionalProperties: false, required: ['channel'], properties: { channel: LOGIN_PARAMS.channel, accountId: LOGIN_PARAMS.accountId } },
    scope: 'operator.admin',
    sideEffect: true,
    description: 'Stop a channel account and remove its credentials (WhatsApp: unlinks the device).',
    handler: async (params: { channel: string; accountId?: string }) => ({ channel: params.channel, ...(await (await loginChannel(params.channel, 'logout')).logout!(params.accountId)) }),
  });

  api.registerGatewayMethod('send', {
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['channel', 'to', 'message'],
      properties: {
        channel: { type: 'string', minLength: 1 },
        to: { type: 'string', minLength: 1 },
        message: { type: 'string', minLength: 1, maxLength: 100_000 },
        accountId: { type: 'string', minLength: 1 },
        threadId: { type: 'string', minLength: 1 },
        replyTo: { type: 'string', minLength: 1 },
        media: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 10 },
      },
    },
    scope: 'operator.write',
    sideEffect: true,
    description: 'Send a message through a channel (the same outbound path as agent replies).',
    handler: async (params: { channel: string; to: string; message: string; accountId?: string; threadId?: string; replyTo?: string; media?: string[] }) => {
      const problem = await unknownChannelProblem(kernel, params.channel);
      if (problem) throw invalid(problem);
      const result = await kernel.channels.send({
        channel: params.channel,
        to: params.to,
        text: params.message,
        ...(params.accountId ? { accountId: params.accountId } : {}),
        ...(params.threadId ? { threadId: params.threadId } : {}),
        ...(params.replyTo ? { replyTo: params.replyTo } : {}),
        ...(params.media ? { media: params.media } : {}),
        context: { channel: params.channel },
      });
      if (result.cancelled) throw invalid('a message_sending hook cancelled the message', { code: 'CANCELLED' });
      if (!result.delivered) throw new ProtocolError(ErrorCodes.UNAVAILABLE, `sending to ${params.channel}:${params.to} failed: ${result.error}`);
      return { ok: true, channel: params.channel, to: params.to, pieces: result.pieces, messageIds: result.messageIds };
    },
  });

  api.registerGatewayMethod('pairing.list', {
    params: { type: 'object', additionalProperties: false, properties: { channel: { type: 'string', minLength: 1 } } },
    scope: 'operator.pairing',
    description: 'Senders waiting for approval on messaging channels, with their codes.',
    handler: async (params: { channel?: string }) => ({ requests: await kernel.channels.pairing.list(params.channel) }),
  });

  api.registerGatewayMethod('pairing.approve', {
    params: { type: 'object', additionalProperties: false, required: ['channel', 'code'], properties: { channel: { type: 'string', minLength: 1 }, code: { type: 'string', minLength: 1 } } },
    scope: 'operator.pairing',
    sideEffect: true,
    description: 'Approve a channel pairing code: the sender may message the assistant from now on.',
    handler: async (params: { channel: string; code: string }) => {
      const request = await kernel.channels.pairing.approve(params.channel, params.code);
      if (!request) throw invalid(`no pending pairing code "${params.code}" on ${params.channel} (codes expire after one hour)`);
      return { approved: true, channel: params.channel, senderId: request.senderId, senderName: request.senderName };
    },
  });

  // ── Device pairing ───────────────────────────────────────────────────────────

  /** Run a pairing change against the store as it is on disk, and answer once it is written. */
  const pairingCall = async <T>(work: () => T): Promise<T> => {
    try {
      await runtime.pairing.reload();
      const result = work();
      await runtime.pairing.flush();
      return result;
    } catch (error) {
      if (error instanceof PairingError) throw invalid(error.message);
      throw error;
    }
  };

  api.registerGatewayMethod('device.pair.list', {
    params: EMPTY,
    scope: 'operator.pairing',
    description: 'Pending pairing requests and paired devices.',
    handler: () => pairingCall(() => ({ pending: runtime.pairing.listPending(), paired: runtime.pairing.listPaired().map(publicDevice) })),
  });

  api.registerGatewayMethod('device.pair.approve', {
    params: REQUEST_ID,
    scope: 'operator.pairing',
    sideEffect: 'optional',
    description: 'Approve a pending pairing request; the device may then connect.',
    handler: (params: { requestId: string }, ctx) =>
      pairingCall(() => {
        const device = runtime.pairing.approve(params.requestId, ctx.deviceId ?? 'operator');
        kernel.protocol.emit('device.pair.resolved', { requestId: params.requestId, deviceId: device.deviceId, decision: 'approved', ts: Date.now() });
        api.logger.info(`device ${device.deviceId.slice(0, 12)}… approved`, { requestId: params.requestId });
        return { device: publicDevice(device) };
      }),
  });

  api.registerGatewayMethod('device.pair.reject', {
    params: REQUEST_ID,
    scope: 'operator.pairing',
    sideEffect: 'optional',
    description: 'Reject a pending pairing request.',
    handler: (params: { requestId: string }) =>
      pairingCall(() => {
        const request = runtime.pairing.reject(params.requestId);
        kernel.protocol.emit('device.pair.resolved', { requestId: request.requestId, deviceId: request.deviceId, decision: 'rejected', ts: Date.now() });
        return { requestId: request.requestId, deviceId: request.deviceId };
      }),
  });

  api.registerGatewayMethod('device.pair.remove', {
    params: { type: 'object', additionalProperties: false, required: ['deviceId'], properties: { deviceId: { type: 'string', minLength: 1 } } },
    scope: 'operator.pairing',
    sideEffect: 'optional',
    description: 'Forget a paired device and disconnect it.',
    handler: (params: { deviceId: string }) =>
      pairingCall(() => {
        runtime.pairing.remove(params.deviceId);
        const closed = runtime.disconnectDevice(params.deviceId, undefined, 'device removed');
        return { deviceId: params.deviceId, disconnected: closed };
      }),
  });

  api.registerGatewayMethod('device.token.rotate', {
    params: DEVICE_ROLE,
    scope: 'operator.pairing',
    sideEffect: 'optional',
    description: 'Issue a new device token (the old one stops working).',
    handler: (params: { deviceId: string; role?: string }, ctx) =>
      pairingCall(() => {
        const role = params.role ?? 'operator';
        const token = runtime.pairing.issueToken(params.deviceId, role);
        // Only the device itself gets to see its new bearer token.
        return { deviceId: params.deviceId, role, rotatedAt: new Date().toISOString(), ...(ctx.deviceId === params.deviceId ? { token } : {}) };
      }),
  });

  api.registerGatewayMethod('device.token.revoke', {
    params: DEVICE_ROLE,
    scope: 'operator.pairing',
    sideEffect: 'optional',
    description: 'Revoke a device token and close connections that used it.',
    handler: (params: { deviceId: string; role?: string }) =>
      pairingCall(() => {
        const role = params.role ?? 'operator';
        const revoked = runtime.pairing.revokeToken(params.deviceId, role);
        const closed = runtime.disconnectDevice(params.deviceId, role, 'device token revoked', 'device-token');
        return { deviceId: params.deviceId, role, revoked, disconnected: closed };
      }),
  });
}

/** UI hints from every manifest, keyed by full config path. */
function composeUiHints(records: readonly PluginRecord[]): Record<string, Record<string, unknown>> {
  const hints: Record<string, Record<string, unknown>> = {};
  for (const record of records) {
    for (const [key, hint] of Object.entries(record.manifest?.uiHints ?? {})) {
      hints[`plugins.entries.${record.id}.config.${key}`] = hint;
    }
  }
  return hints;
}
