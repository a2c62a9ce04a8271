/**
 * Exec approvals: offers the "exec-approvals" service the kernel's approval step asks for
 * every host command, the exec.approval.* / exec.approvals.* gateway methods and events
 * (OpenClaw's names), and `claw approvals` (alias `claw exec-approvals`).
 */
import { definePlugin, ErrorCodes, ProtocolError, type JsonSchema } from '../../sdk/index.js';
import { cliCommand } from '../../sdk/cli.js';
import { registerApprovalMethods } from './approval-methods.js';
import { approvalsCommand, APPROVALS_HELP } from './cli.js';
import {
  approvalsFile,
  parseDocument,
  readSnapshot,
  replaceDocument,
  StaleDocumentError,
  type DocumentSnapshot,
} from './file.js';
import { policyView, resolvedDefaults } from './policy.js';
import { DECISIONS, ExecApprovalService, type Decision } from './service.js';
import { forwardApproval, forwardsRequest, type ForwardingConfig } from './forward.js';
import { useService } from '../../sdk/services.js';
import type { SessionService } from '../../sdk/sessions/index.js';

const ID: JsonSchema = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: { type: 'string', minLength: 1 } },
};

/** OpenClaw's snapshot fields, then claw's view (what config requests, what applies per agent). */
function approvalsPayload(config: Readonly<Record<string, unknown>>, stateDir: string, snapshot: DocumentSnapshot) {
  const { requested, effective } = policyView(config, approvalsFile(stateDir), snapshot.file);
  return {
    path: approvalsFile(stateDir),
    exists: snapshot.exists,
    hash: snapshot.hash,
    file: snapshot.file,
    resolvedDefaults: resolvedDefaults(snapshot.file),
    requested,
    effective,
  };
}

export default definePlugin<{ timeoutMs: number }>({
  id: 'exec-approvals',
  register(api) {
    const service = new ExecApprovalService(api.kernel, api.config.timeoutMs);
    api.registerService({ id: 'exec-approvals', api: service, stop: () => service.close() });
    service.forward = (approval) =>
      forwardsRequest(
        (api.kernel.config() as { approvals?: { exec?: ForwardingConfig } }).approvals?.exec,
        approval.request.agentId,
        approval.request.sessionKey,
      )
        ? forwardApproval(api.kernel, api.logger, approval, async () => {
            const { agentId, sessionKey } = approval.request;
            const sessions = await useService<SessionService>(api.kernel, 'sessions');
            return sessionKey ? sessions?.store(agentId).get(sessionKey) : undefined;
          })
        : undefined;
    // `/approve <id> <decision>` in a chat (commands run only for authorized senders).
    api.registerCommand({
      name: 'approve',
      description: 'Decide a pending exec approval: /approve <id> allow-once | allow-always | deny',
      acceptsArgs: true,
      handler: ({ args }) => ({ text: approveFromChat(service, args) }),
    });
    const events = api.kernel.protocol;
    events.registerEvent('exec.approval.requested', api.id, {
      scope: 'operator.approvals',
      description: '{id, request: {command, cwd, host, agentId, sessionKey, security, ask}, createdAtMs, expiresAtMs}',
    });
    events.registerEvent('exec.approval.resolved', api.id, {
      scope: 'operator.approvals',
      description: '{id, decision, reason?, ts}',
    });
    const missing = (id: string) =>
      new ProtocolError(
        ErrorCodes.INVALID_REQUEST,
        `no pending exec approval "${id}" (unknown, already resolved or expired)`,
      );

    api.registerGatewayMethod('exec.approval.list', {
      scope: 'operator.approvals',
      // A bare array, as OpenClaw answers it (its CLI and Control UI read it so).
      description: 'Pending exec approvals: [{id, request, createdAtMs, expiresAtMs}].',
      params: { type: 'object', additionalProperties: false, properties: {} },
      handler: () => service.list(),
    });
    // OpenClaw's Control UI gathers pending approvals of three kinds. claw's only kind is exec
    // (exec.approval.list): no plugin asks for approval and there is no system agent, so these
    // two answer OpenClaw's empty list.
    for (const method of ['plugin.approval.list', 'openclaw.approval.list'])
      api.registerGatewayMethod(method, {
        scope: 'operator.approvals',
        description: 'Pending approvals of a kind claw never raises: always [].',
        params: { type: 'object' },
        handler: () => [],
      });
    api.registerGatewayMethod('exec.approval.get', {
      scope: 'operator.approvals',
      params: ID,
      handler: (params: { id: string }) => service.get(params.id) ?? Promise.reject(missing(params.id)),
    });
    api.registerGatewayMethod('exec.approval.resolve', {
      scope: 'operator.approvals',
      sideEffect: 'optional',
      description: 'Decide a pending exec approval: allow-once, allow-always (this argv in this directory) or deny.',
      params: {
        type: 'object',
        required: ['id', 'decision'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', minLength: 1 },
          decision: { enum: [...DECISIONS] },
          idempotencyKey: { type: 'string' },
        },
      },
      handler: (params: { id: string; decision: Decision }) => {
        const outcome = service.resolve(params.id, params.decision);
        if (outcome === 'resolved') return { ok: true, id: params.id, decision: params.decision };
        if (outcome === 'same') return { ok: true, id: params.id, decision: params.decision, alreadyResolved: true };
        if (outcome === 'conflict')
          throw new ProtocolError(
            ErrorCodes.INVALID_REQUEST,
            `exec approval "${params.id}" was already resolved as ${service.outcome(params.id)}`,
          );
        if (outcome === 'expired')
          throw new ProtocolError(
            ErrorCodes.INVALID_REQUEST,
            `exec approval "${params.id}" expired before anyone decided (it was denied)`,
          );
        throw missing(params.id);
      },
    });
    api.registerGatewayMethod('exec.approval.waitDecision', {
      scope: 'operator.approvals',
      params: ID,
      description: 'Wait for a pending approval: {decision} (null when it expired undecided).',
      handler: async (params: { id: string }) => {
        const waiting = service.waitDecision(params.id);
        if (!waiting) throw missing(params.id);
        return { id: params.id, decision: await waiting };
      },
    });
    registerApprovalMethods(api, service);
    api.registerGatewayMethod('exec.approvals.get', {
      scope: 'operator.admin',
      description:
        "The gateway host approvals document in OpenClaw's shape {path, exists, hash, file, resolvedDefaults}, plus claw's {requested, effective}.",
      params: { type: 'object', additionalProperties: false, properties: {} },
      handler: () =>
        approvalsPayload(api.kernel.config(), api.kernel.paths.stateDir, readSnapshot(api.kernel.paths.stateDir)),
    });
    api.registerGatewayMethod('exec.approvals.set', {
      scope: 'operator.admin',
      sideEffect: 'optional',
      description:
        'Replace the gateway host approvals document; with baseHash (from exec.approvals.get) only if it has not changed since.',
      params: {
        type: 'object',
        required: ['file'],
        additionalProperties: false,
        properties: {
          file: { type: 'object' },
          baseHash: { type: 'string', minLength: 1 },
          idempotencyKey: { type: 'string' },
        },
      },
      handler: async (params: { file: unknown; baseHash?: string }) => {
        let doc;
        try {
          doc = parseDocument(JSON.stringify(params.file), 'file');
        } catch (error) {
          throw new ProtocolError(ErrorCodes.INVALID_REQUEST, (error as Error).message);
        }
        try {
          const snapshot = await replaceDocument(api.kernel.paths.stateDir, doc, params.baseHash);
          return { ok: true, ...approvalsPayload(api.kernel.config(), api.kernel.paths.stateDir, snapshot) };
        } catch (error) {
          if (error instanceof StaleDocumentError) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, error.message);
          throw error;
        }
      },
    });

    for (const name of ['approvals', 'exec-approvals']) {
      api.registerCli({
        name,
        description: 'Exec approvals: policy, allowlist, pending requests',
        run: cliCommand(APPROVALS_HELP, (argv, ctx) => approvalsCommand(argv, ctx, api, service)),
      });
    }
  },
});

/** What `/approve` answers in the chat. */
function approveFromChat(service: ExecApprovalService, args: string): string {
  const [id, decision, ...rest] = args.trim().split(/\s+/).filter(Boolean);
  if (!id || !decision || rest.length > 0 || !DECISIONS.includes(decision as Decision))
    return `Usage: /approve <id> ${DECISIONS.join(' | ')}`;
  const outcome = service.resolve(id, decision as Decision);
  if (outcome === 'resolved') return `✅ Exec approval ${id}: ${decision}.`;
  if (outcome === 'same') return `Exec approval ${id} was already ${decision}.`;
  if (outcome === 'conflict') return `⚠️ Exec approval ${id} was already resolved as ${service.outcome(id)}.`;
  if (outcome === 'expired') return `⚠️ Exec approval ${id} expired before anyone decided (it was denied).`;
  return `⚠️ No pending exec approval "${id}" (unknown, already resolved or expired).`;
}
