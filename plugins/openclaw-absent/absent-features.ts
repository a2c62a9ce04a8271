/**
 * OpenClaw gateway methods for features claw does not have, answered in OpenClaw's shapes so
 * its Control UI and CLI work against claw instead of failing on "unknown method":
 *
 * - self-update runs (claw updates through `claw update`, not through its gateway),
 * - the secret store and SecretRefs (claw reads keys from the environment and its config),
 * - theme catalogues (the UI's built-in look is all there is; nothing is stored per profile),
 * - browser plugin bundles and the ClawHub plugin catalogue (claw's plugins add no UI code and
 *   are installed from disk),
 * - link unfurling and pull-request tracking in the Control UI (the gateway never fetches the web
 *   for the UI),
 * - gateway suspension (claw's gateway is stopped and started, never parked),
 * - opening the config file in an editor on the gateway host,
 * - the GitHub identity for agent tools (claw's tools reach GitHub only through exec and web
 *   fetch, with whatever credentials the host has),
 * - approvals requested by plugins (claw's plugins block a tool call with a hook, they never
 *   park it waiting for an operator),
 * - memory import from other assistants (claw's memory is the workspace's Markdown files).
 *
 * A read answers OpenClaw's empty shape; anything that would change or start something fails
 * with UNAVAILABLE naming what claw lacks, so no client mistakes it for success.
 */
import { createHash } from 'node:crypto';
import { agentPaths, defaultAgentId, unknownAgentProblem } from '../../sdk/agent/index.js';
import {
  ErrorCodes,
  normalizeAgentId,
  ProtocolError,
  type JsonSchema,
  type KernelConfig,
  type PluginApi,
} from '../../sdk/index.js';

/** OpenClaw's clients may send params newer than claw knows: tolerated, not refused. */
const ANY_PARAMS: JsonSchema = { type: 'object' };

type Scope = 'operator.read' | 'operator.write' | 'operator.admin' | 'operator.approvals';

/** The one theme there is: the Control UI's own default look, chosen for the whole gateway. */
const DEFAULT_THEME = {
  id: 'claw',
  name: 'Claw',
  description: 'The Control UI’s default look; claw keeps no other themes.',
};

const THEME_SELECTION = { id: DEFAULT_THEME.id, mode: 'system', scope: 'gateway', overrides: {} };

/** What the browser-plugin catalogue looks like with no plugin contributing UI code. */
function emptyControlUiCatalog() {
  const plugins: unknown[] = [];
  const diagnostics: unknown[] = [];
  const revision = createHash('sha256').update(JSON.stringify({ plugins, diagnostics })).digest('hex');
  return { revision, plugins, diagnostics };
}

/** GitHub facts for an identity that does not exist: nothing detected, no credential, no evidence. */
const NO_GITHUB_IDENTITY = {
  source: 'system-detected',
  credentialKind: 'native',
  credentialState: 'unavailable',
  account: null,
  gitAuthor: { name: null, email: null },
  evidence: 'none',
  accessExpiresAtMs: null,
  refreshState: 'not_applicable',
  oauthScopes: [],
  repositoryGrants: 'unknown',
};

function unavailable(message: string): never {
  throw new ProtocolError(ErrorCodes.UNAVAILABLE, message);
}

export function registerAbsentFeatureMethods(api: PluginApi): void {
  const kernel = api.kernel;
  const method = (name: string, scope: Scope, description: string, handler: (params: any) => unknown) =>
    api.registerGatewayMethod(name, { params: ANY_PARAMS, scope, description, handler });
  const refuse = (name: string, scope: Scope, message: string) =>
    method(name, scope, `Refused: ${message}.`, () => unavailable(message));

  // Self-update runs.
  method('update.runs.get', 'operator.admin', 'No gateway update runs: {run: null}.', () => ({ run: null }));
  refuse('update.run', 'operator.admin', 'claw’s gateway does not update itself; run `claw update` on its host');
  refuse('update.hold', 'operator.admin', 'claw’s gateway has no update campaign to hold');
  method(
    'update.report',
    'operator.admin',
    'No failed update attempt is ever recorded, so none can be reported.',
    () => {
      throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'This failed update attempt is stale or unavailable.');
    },
  );

  // The secret store and SecretRefs.
  method('secrets.store.list', 'operator.admin', 'The secret store, empty: {entries: []}.', () => ({ entries: [] }));
  refuse('secrets.store.set', 'operator.admin', 'claw has no secret store; put keys in the environment or its config');
  refuse('secrets.store.delete', 'operator.admin', 'claw has no secret store');
  refuse('secrets.reload', 'operator.admin', 'claw has no secret references to reload; keys are read when used');
  refuse('secrets.resolve', 'operator.admin', 'claw has no secret references to resolve');

  // Themes.
  method('themes.list', 'operator.read', 'The one theme claw offers, selected gateway-wide.', () => ({
    current: THEME_SELECTION,
    theme: DEFAULT_THEME,
    themes: [DEFAULT_THEME],
  }));
  method('themes.get', 'operator.read', 'The selected theme (only the default exists).', (params: { id?: unknown }) => {
    if (params.id !== undefined && params.id !== DEFAULT_THEME.id) {
      throw new ProtocolError(
        ErrorCodes.INVALID_REQUEST,
        `Theme ${String(params.id)} is unavailable. List themes to choose an installed theme.`,
      );
    }
    return { current: THEME_SELECTION, theme: DEFAULT_THEME };
  });
  refuse('themes.set', 'operator.write', 'claw has no theme catalogue or stored appearance preferences');

  // Browser plugin bundles and the plugin catalogue.
  method(
    'plugins.controlUi.list',
    'operator.read',
    'Plugin UI bundles, none: {revision, plugins: [], diagnostics: []}.',
    () => emptyControlUiCatalog(),
  );
  refuse('plugins.controlUi.reload', 'operator.admin', 'claw’s plugins contribute no Control UI bundles');
  refuse('plugins.controlUi.report', 'operator.read', 'claw’s plugins contribute no Control UI bundles to activate');
  method(
    'plugins.uiDescriptors',
    'operator.read',
    'What plugins add to the Control UI: no tabs, widgets or link readers; methods lists what the gateway answers.',
    () => ({
      ok: true,
      generation: 0,
      descriptors: [],
      methods: kernel.protocol.methodNames(),
      controlUiTabs: [],
      controlUiWidgetKinds: [],
      controlUiLinkReaders: [],
      pluginSurfaceUrls: {},
    }),
  );
  method(
    'plugin.surface.refresh',
    'operator.read',
    'Plugin surfaces, none: claw’s plugins serve no UI surfaces.',
    (params: { surface?: unknown }) => {
      if (typeof params.surface !== 'string' || !params.surface.trim()) {
        throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'surface required');
      }
      return unavailable(`${params.surface} plugin surface unavailable: claw’s plugins serve no UI surfaces`);
    },
  );
  method(
    'plugins.catalog.browse',
    'operator.read',
    'The ClawHub plugin catalogue, empty: claw installs plugins from disk.',
    () => ({
      items: [],
      remoteError: 'claw has no plugin catalogue; install plugins from a folder and list them with plugins.list.',
    }),
  );
  refuse('plugins.catalog.get', 'operator.read', 'claw has no plugin catalogue; install plugins from a folder');

  // The Control UI's web lookups.
  method(
    'controlUi.linkPreview',
    'operator.read',
    'Link previews, off: the gateway never fetches pages for the UI.',
    (params: { url?: unknown }) => {
      if (typeof params.url !== 'string' || !/^https?:\/\//i.test(params.url)) {
        throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'invalid controlUi.linkPreview params');
      }
      return {};
    },
  );
  method(
    'controlUi.sessionPullRequests.subscribe',
    'operator.read',
    'Pull-request updates for sessions, never sent: claw tracks no pull requests, so nothing is subscribed.',
    () => ({ subscribed: false }),
  );
  refuse(
    'controlUi.sessionPullRequests.checks',
    'operator.read',
    'claw tracks no pull requests or CI checks for sessions',
  );

  // Suspension and the host's editor.
  refuse(
    'gateway.suspend.prepare',
    'operator.admin',
    'claw’s gateway cannot be suspended; stop it with `claw gateway stop`',
  );
  refuse('gateway.suspend.resume', 'operator.admin', 'claw’s gateway is never suspended');
  refuse(
    'config.openFile',
    'operator.admin',
    'claw does not open editors on the gateway host; `claw config path` names the file to edit',
  );

  /** The agent a request names (default: the default agent); an unknown one is refused. */
  const agentOf = (raw: unknown): string => {
    const config = kernel.config() as KernelConfig;
    if (raw === undefined || raw === '') return defaultAgentId(config);
    const problem = unknownAgentProblem(config, String(raw));
    if (problem) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, problem);
    return normalizeAgentId(String(raw));
  };

  // The GitHub identity of agent tools.
  method(
    'tools.github.status',
    'operator.read',
    'The GitHub identity agent tools use: none is configured or detected by claw.',
    (params: { agentId?: unknown; selectedScope?: unknown }) => {
      const scope = params.selectedScope === 'agent' ? 'agent' : 'system';
      return {
        agentId: agentOf(params.agentId),
        selectedScope: scope,
        selected: { scope, configured: false, identity: null },
        effective: NO_GITHUB_IDENTITY,
      };
    },
  );
  refuse(
    'tools.github.configure',
    'operator.admin',
    'claw has no GitHub identity for agent tools; give the host’s git and gh their own credentials',
  );

  // Plugin approvals.
  method(
    'plugin.approval.resolve',
    'operator.approvals',
    'Resolve a plugin approval: claw’s plugins never request one, so every id is unknown.',
    () => {
      throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'unknown or expired approval id', {
        reason: 'APPROVAL_NOT_FOUND',
        remediation: 'claw’s plugins do not request approvals; exec approvals are resolved with exec.approval.resolve.',
      });
    },
  );

  // Memory import from other assistants.
  method(
    'migrations.memory.plan',
    'operator.admin',
    'What memory could be imported into an agent’s workspace: no import providers exist in claw.',
    (params: { agentId?: unknown }) => {
      const agentId = agentOf(params.agentId);
      const workspace = agentPaths(kernel.config() as KernelConfig, agentId, kernel.paths).workspaceDir;
      return { agentId, workspace, providers: [] };
    },
  );
  refuse(
    'migrations.memory.apply',
    'operator.admin',
    'claw has no memory import providers; copy notes into the workspace’s MEMORY.md or memory/ folder',
  );
}
