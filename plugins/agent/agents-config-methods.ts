/**
 * OpenClaw's agents.update and agents.delete over claw's `agents.list`, written through the
 * config lock (the gateway's watcher applies the file to the running process). An agent's
 * identity goes to its `identity` entry, which claw prefers over IDENTITY.md. Deleting an
 * agent moves its own folders (workspace, state under agents/<id>) into <stateDir>/trash/
 * unless another agent still uses them; nothing is erased.
 */
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { agentIds, agentPaths, assertKnownAgent } from '../../sdk/agent/index.js';
import {
  ErrorCodes,
  expandHome,
  normalizeAgentId,
  ProtocolError,
  type JsonSchema,
  type KernelConfig,
  type PluginApi,
} from '../../sdk/index.js';
import { editConfig } from '../../sdk/config.js';

type AnyRecord = Record<string, any>;

const TEXT: JsonSchema = { type: 'string', minLength: 1 };

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

function listOf(raw: AnyRecord): AnyRecord[] {
  const agents = (raw.agents ??= {}) as AnyRecord;
  return (agents.list ??= []) as AnyRecord[];
}

export function registerAgentConfigMethods(api: PluginApi): void {
  const kernel = api.kernel;
  const config = () => kernel.config() as KernelConfig;

  api.registerGatewayMethod('agents.update', {
    params: {
      type: 'object',
      required: ['agentId'],
      properties: {
        agentId: TEXT,
        name: TEXT,
        workspace: TEXT,
        model: { anyOf: [TEXT, { type: 'null' }] },
        agentRuntime: TEXT,
        emoji: { type: 'string' },
        avatar: { type: 'string' },
      },
    },
    scope: 'operator.admin',
    sideEffect: 'optional',
    description:
      "Change an agent's name, workspace, model (null clears it) or identity (emoji, avatar) in agents.list: {ok, agentId}.",
    handler: async (params: {
      agentId: string;
      name?: string;
      workspace?: string;
      model?: string | null;
      agentRuntime?: string;
      emoji?: string;
      avatar?: string;
    }) => {
      const agentId = normalizeAgentId(params.agentId);
      if (!agentIds(config()).map(normalizeAgentId).includes(agentId))
        throw invalid(`agent "${params.agentId}" not found`);
      if (params.agentRuntime !== undefined)
        throw invalid('claw runs every agent on its own agent loop; agentRuntime cannot be chosen');
      if (typeof params.model === 'string' && !/^[^/\s]+\/\S+$/.test(params.model.trim()))
        throw invalid(`model "${params.model}" is not a provider/model ref`);
      const name = params.name?.trim().replace(/\s+/g, ' ');
      await editConfig(api, `agents.update ${agentId}`, (raw) => {
        const list = listOf(raw);
        let entry = list.find((agent) => agent && normalizeAgentId(agent.id) === agentId);
        if (!entry) {
          // The implicit agent of an empty agents.list becomes its one explicit entry.
          entry = { id: agentId, ...(list.length === 0 ? { default: true } : {}) };
          list.push(entry);
        }
        if (name) entry.name = name;
        if (params.workspace?.trim()) entry.workspace = resolve(expandHome(params.workspace.trim()));
        if (params.model === null) delete entry.model;
        else if (params.model !== undefined) entry.model = params.model.trim();
        const identity: AnyRecord = { ...entry.identity };
        if (name) identity.name = name;
        for (const field of ['emoji', 'avatar'] as const) {
          const value = params[field]?.trim();
          if (value === undefined) continue;
          if (value) identity[field] = value;
          else delete identity[field];
        }
        if (Object.keys(identity).length > 0) entry.identity = identity;
        else delete entry.identity;
      });
      if (params.workspace?.trim()) mkdirSync(resolve(expandHome(params.workspace.trim())), { recursive: true });
      return { ok: true, agentId };
    },
  });

  api.registerGatewayMethod('agents.delete', {
    params: {
      type: 'object',
      required: ['agentId'],
      properties: { agentId: TEXT, deleteFiles: { type: 'boolean' } },
    },
    scope: 'operator.admin',
    sideEffect: 'optional',
    description:
      'Remove an agent from agents.list and its bindings; deleteFiles (default true) moves its own folders to <stateDir>/trash: {ok, agentId, removedBindings, removed?, failed?}.',
    handler: async (params: { agentId: string; deleteFiles?: boolean }) => {
      const agentId = normalizeAgentId(params.agentId);
      const before = config();
      const ids = [...new Set(agentIds(before).map(normalizeAgentId))];
      if (!ids.includes(agentId)) throw invalid(`agent "${params.agentId}" not found`);
      assertKnownAgent(before, agentId);
      if (ids.length === 1) throw invalid(`Agent "${agentId}" is the only configured agent and cannot be deleted.`);
      const own = agentPaths(before, agentId, kernel.paths);
      let removedBindings = 0;
      const after = await editConfig(api, `agents.delete ${agentId}`, (raw) => {
        const list = listOf(raw);
        const index = list.findIndex((agent) => agent && normalizeAgentId(agent.id) === agentId);
        // The file is what counts: the running config may still hold an agent a restart will drop.
        if (index < 0) throw invalid(`agent "${params.agentId}" not found`);
        if (list.length === 1) throw invalid(`Agent "${agentId}" is the only configured agent and cannot be deleted.`);
        list.splice(index, 1);
        if (Array.isArray(raw.bindings)) {
          const kept = raw.bindings.filter(
            (binding: AnyRecord) => !binding || normalizeAgentId(String(binding.agentId ?? '')) !== agentId,
          );
          removedBindings = raw.bindings.length - kept.length;
          raw.bindings = kept;
        }
        return raw as KernelConfig;
      });
      if (params.deleteFiles === false) return { ok: true, agentId, removedBindings };
      // Folders another agent still uses (a shared workspace, the default one) stay where they are.
      const inUse = new Set(
        agentIds(after).flatMap((id) => {
          const paths = agentPaths(after, id, kernel.paths);
          return [resolve(paths.workspaceDir), resolve(paths.agentDir)];
        }),
      );
      const candidates = [own.workspaceDir, join(kernel.paths.stateDir, 'agents', agentId), own.agentDir];
      const trash = join(kernel.paths.stateDir, 'trash', `agent-${agentId}-${Date.now()}`);
      const removed: Array<{ path: string; method: 'trash' | 'missing' }> = [];
      const failed: Array<{ path: string; reason: string }> = [];
      for (const path of [...new Set(candidates.map((candidate) => resolve(candidate)))]) {
        if (removed.some((done) => path.startsWith(`${done.path}/`))) continue;
        if (!existsSync(path)) {
          removed.push({ path, method: 'missing' });
          continue;
        }
        if ([...inUse].some((used) => used === path || used.startsWith(`${path}/`) || path.startsWith(`${used}/`))) {
          failed.push({ path, reason: 'another agent still uses this folder; it was kept' });
          continue;
        }
        try {
          mkdirSync(trash, { recursive: true, mode: 0o700 });
          renameSync(path, join(trash, `${removed.length}-${basename(path)}`));
          removed.push({ path, method: 'trash' });
        } catch (error) {
          failed.push({ path, reason: `could not move it to ${trash}: ${(error as Error).message}` });
        }
      }
      return { ok: true, agentId, removedBindings, removed, ...(failed.length > 0 ? { failed } : {}) };
    },
  });
}
