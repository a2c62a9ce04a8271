/**
 * OpenClaw's audit trail (agent runs, tool actions and messages recorded with execution
 * identity) and its history of configuration changes, in OpenClaw's shapes. claw records
 * neither: its tool decisions go to the gateway log and config writes are not journalled. The
 * lists answer empty, and inspecting a run answers OpenClaw's "not found" inspection, which
 * says that missing evidence is not proof that no run happened.
 */
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';

const LIST_PARAMS: JsonSchema = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1 }, cursor: { type: 'string' } },
};

/** The inspection OpenClaw returns for a run or execution it holds no record of. */
function missingInspection(selector: { runId?: string; executionId?: string }) {
  const byExecution = selector.executionId !== undefined;
  const missingEvidence = byExecution ? ['identity.context'] : ['run.record', 'identity.context'];
  return {
    schemaVersion: 1,
    run: byExecution
      ? { executionId: selector.executionId, status: 'unknown' }
      : { runId: selector.runId, status: 'unknown' },
    identity: {
      state: 'unknown',
      reasonCode: byExecution ? 'execution_not_found' : 'run_not_found',
      missingEvidence,
      remediation: [
        byExecution
          ? { code: 'verify_execution_id', text: 'claw keeps no audit records; check the execution id.' }
          : { code: 'verify_run_id', text: 'claw keeps no audit records; a missing record does not mean no run.' },
      ],
    },
    decisionDisplays: [],
    coverage: { state: 'unknown', missingEvidence },
  };
}

export function registerAbsentAudit(api: PluginApi): void {
  for (const method of ['audit.list', 'audit.activity.list'])
    api.registerGatewayMethod(method, {
      params: LIST_PARAMS,
      scope: 'operator.read',
      description: 'Audit events, empty: claw keeps no audit trail.',
      handler: () => ({ events: [] }),
    });

  api.registerGatewayMethod('audit.run.inspect', {
    params: {
      type: 'object',
      properties: { runId: { type: 'string', minLength: 1 }, executionId: { type: 'string', minLength: 1 } },
    },
    scope: 'operator.read',
    description: "One run's execution identity: OpenClaw's not-found inspection, claw keeps no audit records.",
    handler: (params: { runId?: string; executionId?: string }) => {
      if ((params.runId === undefined) === (params.executionId === undefined))
        throw new ProtocolError(
          ErrorCodes.INVALID_REQUEST,
          'audit.run.inspect needs exactly one of runId or executionId',
        );
      return missingInspection(params);
    },
  });

  api.registerGatewayMethod('openclaw.changes.list', {
    params: {
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1 }, beforeCursor: { type: 'string' } },
    },
    scope: 'operator.admin',
    description: 'History of configuration changes, empty: claw does not journal config writes.',
    handler: () => ({ entries: [] }),
  });
}
