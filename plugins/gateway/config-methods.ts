/**
 * config.* and plugins.*: read the config file (secrets redacted) and its schema, and change
 * it. Every change goes through writeConfig: under the config lock, against the hash the
 * client read, keeping redacted secrets, refusing new errors, then hot-reloading or
 * restarting as gateway.reload.mode says.
 */
import {
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
  type PathSegment,
  type PluginApi,
  type PluginRecord,
  type ReloadResult,
} from '../../sdk/index.js';
import { CONFIG_ADMIN_SERVICE, configHash, ConfigConflictError, type ConfigAdmin } from '../../sdk/config.js';
import { requireService } from '../../sdk/services.js';
import { mergePatch } from './merge-patch.js';
import type { GatewayRuntime } from './runtime.js';

const EMPTY: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };
const WHOLE_CONFIG: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    raw: { type: 'string', description: 'The whole config as JSON5 text' },
    config: { type: 'object', description: 'The whole config as an object' },
    baseHash: {
      type: 'string',
      description:
        'config.get hash this edit is based on (required once the file exists); refused if the file changed since',
    },
    restartDelayMs: { type: 'integer', minimum: 0, maximum: 60_000 },
  },
};

function invalid(message: string, details?: unknown): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message, details);
}

/** Config paths a manifest marks sensitive, on top of secret-looking key names. */
function sensitivity(runtime: GatewayRuntime) {
  const hints = composeUiHints(runtime.api.kernel.plugins());
  const sensitive = new Set(
    Object.entries(hints)
      .filter(([, hint]) => hint.sensitive)
      .map(([path]) => path),
  );
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
    return Object.fromEntries(
      Object.entries(next).map(([key, value]) => [key, restoreRedacted(value, current, [...at, key])]),
    );
  }
  return next;
}

function parseWhole(params: { raw?: string; config?: Record<string, unknown> }, what: string): Record<string, unknown> {
  if ((params.raw === undefined) === (params.config === undefined))
    throw invalid(`${what} needs exactly one of params.raw (JSON5 text) or params.config (object)`);
  if (params.config !== undefined) return params.config;
  let value: unknown;
  try {
    value = parseJson5(params.raw!, 'params.raw');
  } catch (error) {
    throw invalid((error as Error).message);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw invalid('params.raw must hold a JSON5 object');
  return value as Record<string, unknown>;
}

export function registerConfigMethods(api: PluginApi, runtime: GatewayRuntime): void {
  const kernel = api.kernel;
  const configFile = kernel.configFile;
  const admin = () =>
    requireService<ConfigAdmin>(kernel, CONFIG_ADMIN_SERVICE, "the gateway's plugins and config.schema methods");

  /**
   * Under the config lock: check the base hash, edit the file as it is now, keep redacted
   * secrets, refuse new errors, write atomically, tell clients, then hot-reload or restart.
   */
  async function writeConfig(
    method: string,
    edit: (current: ConfigSnapshot) => Record<string, unknown>,
    baseHash: string | null | undefined,
    mayRestart = true,
  ) {
    const path = kernel.paths.configPath;
    try {
      return await configFile.locked(
        `gateway ${method}`,
        async (write) => {
          const current = configFile.read();
          // As OpenClaw: an edit of an existing file must say which revision it is based on.
          if (baseHash === undefined && current.exists) {
            throw invalid(
              `${method} needs params.baseHash (the hash from config.get) because ${path} exists; read it with config.get and retry`,
              { code: 'CONFIG_BASE_HASH_REQUIRED' },
            );
          }
          const raw = restoreRedacted(edit(current), current.raw) as Record<string, unknown>;
          const errors = await introducedErrors(raw, current);
          if (errors.length > 0) {
            throw invalid(`config is invalid: ${errors.map(formatIssue).join('; ')}`, {
              code: 'INVALID_CONFIG',
              issues: errors,
            });
          }
          write(raw);
          const hash = configHash(path);
          kernel.protocol.emit('config.changed', { path, hash, ts: Date.now() });
          const reload: ReloadResult = runtime.reloader.written(current, configFile.read(), hash, mayRestart);
          api.logger.info(`config written (${method}): ${reload.message}`, { path, paths: reload.changedPaths });
          return {
            path,
            hash,
            reload,
            restartRequired: reload.restartRequired && !reload.restartScheduled,
            message: reload.message,
          };
        },
        baseHash ?? undefined,
      );
    } catch (error) {
      // By code, not instanceof: the host's writer may have loaded its own copy of the SDK module.
      const conflict = error as Partial<ConfigConflictError> | undefined;
      if (conflict?.code === 'CONFIG_CONFLICT')
        throw invalid(conflict.message!, { code: 'CONFIG_CONFLICT', currentHash: conflict.currentHash });
      throw error;
    }
  }

  /** Errors `raw` has that the current file does not (a pre-existing plugin problem does not block every edit). */
  async function introducedErrors(raw: Record<string, unknown>, current: ConfigSnapshot): Promise<ConfigIssue[]> {
    const errors = (await configFile.check(raw)).filter((issue: ConfigIssue) => issue.level === 'error');
    if (errors.length === 0 || !current.exists || current.issues.some((issue) => issue.path === '<file>'))
      return errors;
    const key = (issue: ConfigIssue) => `${issue.path}\u0000${issue.message}`;
    const known = new Set((await configFile.check(current.raw)).map(key));
    return errors.filter((issue) => !known.has(key(issue)));
  }

  api.registerGatewayMethod('plugins.list', {
    params: EMPTY,
    scope: 'operator.read',
    description: 'Every plugin found, with status and the reason for it.',
    handler: async () => ({ plugins: kernel.plugins().map((await admin()).describePlugin) }),
  });

  api.registerGatewayMethod('config.get', {
    params: EMPTY,
    scope: 'operator.read',
    description: 'The config file (secrets redacted), its hash for conflict checks, and its problems.',
    handler: () => {
      const snapshot = configFile.read();
      const config = redactConfig(snapshot.raw, sensitivity(runtime));
      const hash = configHash(snapshot.path);
      // OpenClaw tells the file, what it includes and the config the gateway runs apart; claw
      // runs the file as written ($include is resolved at read), so every view is the same object.
      return {
        path: snapshot.path,
        includedPaths: [],
        includeProvenance: [],
        agentRosterIncludeOwned: false,
        bindingsIncludeOwned: false,
        exists: snapshot.exists,
        raw: snapshot.exists ? JSON.stringify(config, null, 2) : null,
        parsed: config,
        sourceConfig: config,
        resolved: config,
        valid: !snapshot.issues.some((issue) => issue.level === 'error'),
        warnings: snapshot.issues.filter((issue) => issue.level === 'warning'),
        runtimeConfig: config,
        config,
        hash,
        issues: snapshot.issues,
        legacyIssues: [],
        configRevisionHash: hash,
        appliedConfigHash: hash,
      };
    },
  });

  api.registerGatewayMethod('config.schema', {
    params: EMPTY,
    scope: 'operator.read',
    description: 'JSON Schema of the whole config, with UI hints from plugin manifests.',
    handler: async () => ({
      schema: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        title: 'OpenClawConfig',
        ...(await admin()).configSchema(kernel.plugins()),
      },
      uiHints: composeUiHints(kernel.plugins()),
      version: runtime.version,
      generatedAt: new Date().toISOString(),
    }),
  });

  api.registerGatewayMethod('config.set', {
    params: WHOLE_CONFIG,
    scope: 'operator.admin',
    sideEffect: 'optional',
    description:
      'Replace the whole config (validated, written atomically); safe changes apply at once, others per gateway.reload.mode.',
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
        baseHash: {
          type: 'string',
          description:
            'config.get hash this edit is based on (required once the file exists); refused if the file changed since',
        },
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
            throw invalid(
              `the config file cannot be parsed (${current.issues[0]!.message}); replace it with config.set instead`,
            );
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
    handler: async (params: {
      raw?: string;
      config?: Record<string, unknown>;
      baseHash?: string;
      restartDelayMs?: number;
    }) => {
      const next = parseWhole(params, 'config.apply');
      // It restarts whatever changed: the reload only reports (and hot-applies, should the restart be impossible).
      const written = await writeConfig('config.apply', () => next, params.baseHash, false);
      const delayMs = params.restartDelayMs ?? 250;
      const scheduled = runtime.requestRestart?.('config.apply', delayMs) ?? false;
      const message = scheduled ? 'The gateway is restarting to apply the new config.' : written.message;
      return {
        ...written,
        restartRequired: !scheduled && written.restartRequired,
        message,
        restart: { scheduled, delayMs: scheduled ? delayMs : null },
      };
    },
  });

  /** Turns a plugin on or off in the config file; the running gateway applies it per gateway.reload.mode. */
  async function setPluginEnabled(method: string, id: string, on: boolean) {
    const record = kernel.plugins().find((candidate) => candidate.id === id);
    if (!record) throw invalid(`no plugin "${id}" is installed`);
    const { setPluginEnabled: edit } = await admin();
    let notes: string[] = [];
    const written = await writeConfig(
      method,
      (current) => {
        const raw = structuredClone(current.raw);
        try {
          notes = edit(raw, record, on);
        } catch (error) {
          if ((error as { code?: unknown }).code === 'PLUGIN_MANAGE') throw invalid((error as Error).message);
          throw error;
        }
        return raw;
      },
      null, // edits the file as it is under the lock
    );
    return { written, notes };
  }

  for (const on of [true, false]) {
    api.registerGatewayMethod(on ? 'plugins.enable' : 'plugins.disable', {
      params: {
        type: 'object',
        additionalProperties: false,
        required: ['id'],
        properties: { id: { type: 'string', minLength: 1 } },
      },
      scope: 'operator.admin',
      sideEffect: true,
      description: on
        ? 'Turn a plugin on (an exclusive slot switches holders); takes effect on restart.'
        : 'Turn a plugin off; takes effect on restart.',
      handler: async (params: { id: string }) => {
        const { written, notes } = await setPluginEnabled(on ? 'plugins.enable' : 'plugins.disable', params.id, on);
        return { ...written, id: params.id, enabled: on, notes };
      },
    });
  }

  api.registerGatewayMethod('plugins.setEnabled', {
    // OpenClaw's Control UI may send more (a review token): tolerated.
    params: {
      type: 'object',
      required: ['pluginId', 'enabled'],
      properties: { pluginId: { type: 'string', minLength: 1 }, enabled: { type: 'boolean' } },
    },
    scope: 'operator.admin',
    // OpenClaw's Control UI sends no idempotency key here.
    sideEffect: 'optional',
    description:
      "OpenClaw's plugins.setEnabled: {ok, restartRequired, runtime, plugin, pluginId, warnings?}; runtime says how claw's gateway applies the change.",
    handler: async (params: { pluginId: string; enabled: boolean }) => {
      const { written, notes } = await setPluginEnabled('plugins.setEnabled', params.pluginId, params.enabled);
      const record = kernel.plugins().find((candidate) => candidate.id === params.pluginId)!;
      return {
        ok: true,
        restartRequired: written.restartRequired,
        runtime: { reload: written.reload, message: written.message, hash: written.hash },
        plugin: { ...(await admin()).describePlugin(record), enabled: params.enabled },
        pluginId: params.pluginId,
        ...(notes.length > 0 ? { warnings: notes } : {}),
      };
    },
  });
}

/** UI hints from every manifest, keyed by full config path. */
export function composeUiHints(records: readonly PluginRecord[]): Record<string, Record<string, unknown>> {
  const hints: Record<string, Record<string, unknown>> = {};
  for (const record of records) {
    for (const [key, hint] of Object.entries(record.manifest?.uiHints ?? {})) {
      hints[`plugins.entries.${record.id}.config.${key}`] = hint;
    }
  }
  return hints;
}
