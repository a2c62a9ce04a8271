/**
 * Managed projects and worktrees, terminals, remote desktops, port portals, attach grants and
 * Claw packages, as OpenClaw's clients ask for them: claw runs an agent's tools in its workspace
 * (or a sandbox) and keeps none of these, so the lists are empty and every change is
 * UNAVAILABLE. Releasing or revoking something that was never handed out answers OpenClaw's
 * "nothing done" value. See absent-kit.ts for the rule these follow.
 */
import { type PluginApi, registerMethodTable, requiredMethodString } from '../../sdk/index.js';
import { unavailable } from './absent-kit.js';

export function registerAbsentWorkspace(api: PluginApi): void {
  registerMethodTable(api, {
    'projects.list': {
      scope: 'operator.read',
      description: 'Registered projects: none, as claw keeps no project registry.',
      handler: () => ({ projects: [] }),
    },
    'projects.register': unavailable('project registry', 'operator.admin', 'Register a checkout as a project.'),
    'projects.add': unavailable('project registry', 'operator.write', 'Clone a repository as a managed project.'),
    'projects.searchRemote': unavailable(
      'project registry (it searches no remote repositories)',
      'operator.read',
      'Search remote repositories to clone as projects.',
    ),

    'worktrees.list': {
      scope: 'operator.read',
      description: 'Managed git worktrees: none.',
      handler: () => ({ worktrees: [] }),
    },
    'worktrees.branches': unavailable('managed worktrees', 'operator.write', 'Branches a worktree could start from.', [
      'repoRoot',
    ]),
    'worktrees.create': unavailable('managed worktrees', 'operator.write', 'Create a managed worktree.', ['repoRoot']),
    'worktrees.remove': unavailable('managed worktrees', 'operator.admin', 'Remove a managed worktree.', ['id']),
    'worktrees.restore': unavailable('managed worktrees', 'operator.admin', 'Restore a removed worktree.', ['id']),
    'worktrees.gc': unavailable('managed worktrees', 'operator.admin', 'Clean up stale worktrees.'),

    'terminal.list': {
      scope: 'operator.admin',
      description: 'Open terminal sessions: none, as claw has no terminals.',
      handler: () => ({ sessions: [] }),
    },
    'terminal.attach': unavailable('terminal sessions', 'operator.admin', 'Attach to a terminal session.', [
      'sessionId',
    ]),
    'terminal.upload': unavailable('terminal sessions', 'operator.admin', 'Upload a file into a terminal session.', [
      'sessionId',
    ]),
    'terminal.close': {
      scope: 'operator.admin',
      description: 'Close a terminal session: there is none, so nothing is closed (ok: false).',
      handler: (params, _ctx, method) => {
        requiredMethodString(method, params, 'sessionId');
        return { ok: false };
      },
    },

    'desktop.observe': unavailable('remote desktops', 'operator.admin', 'Watch or control a desktop.'),
    'desktop.launch': unavailable('remote desktops', 'operator.admin', 'Launch an app on a desktop.'),
    'desktop.release': {
      scope: 'operator.admin',
      description: 'Release a desktop observer: claw hands none out, so nothing is released.',
      handler: (params, _ctx, method) => {
        requiredMethodString(method, params, 'wsPath');
        return { released: false };
      },
    },

    'portal.list': {
      scope: 'operator.read',
      description: 'Open port portals: none.',
      handler: () => ({ portals: [] }),
    },
    'portal.close': unavailable('port portals', 'operator.write', 'Close a port portal.', ['id']),

    'attach.grant': unavailable(
      'attach grants (external harnesses cannot borrow its tools)',
      'operator.admin',
      "Grant an external agent harness use of an agent's tools.",
    ),
    'attach.revoke': {
      scope: 'operator.admin',
      description: 'Revoke an attach grant: claw grants none, so nothing is revoked.',
      handler: (params, _ctx, method) => {
        requiredMethodString(method, params, 'token');
        return { revoked: false };
      },
    },

    'claws.monitors': unavailable('Claw packages', 'operator.admin', "Inspect or drain a Claw package's monitors."),
    'claws.packages.remove': unavailable('Claw packages', 'operator.admin', 'Remove an installed Claw package.'),
  });
}
