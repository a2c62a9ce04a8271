/**
 * OpenClaw's background task ledger, its task suggestions and per-session progress cards, in
 * OpenClaw's shapes. claw keeps none of them: cron runs are listed by cron.runs and subagent
 * runs by sessions.*, and nothing proposes tasks or pins progress cards. So every task id is
 * unknown (answered as OpenClaw answers an unknown id), lists are empty, and requests that
 * would create or run something are refused as unavailable.
 */
import { ErrorCodes, ProtocolError, type PluginApi } from '../../sdk/index.js';
import { absent, requiring, requiringIds } from './absent-kit.js';

const TASK_NOT_FOUND = 'task not found';

export function registerAbsentTasks(api: PluginApi): void {
  api.registerGatewayMethod('tasks.get', {
    params: requiring('taskId'),
    scope: 'operator.read',
    description: 'One background task: claw keeps no task ledger, so every id is unknown.',
    handler: (params: { taskId: string }) => {
      throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `${TASK_NOT_FOUND}: ${params.taskId}`);
    },
  });

  api.registerGatewayMethod('tasks.history', {
    params: requiring('taskId'),
    scope: 'operator.read',
    description: "A background task's transcript page: claw keeps no task ledger, so every id is unknown.",
    handler: () => {
      throw new ProtocolError(ErrorCodes.INVALID_REQUEST, 'Task not found.');
    },
  });

  api.registerGatewayMethod('tasks.cancel', {
    params: requiring('taskId'),
    scope: 'operator.write',
    description: 'Cancel a background task: {found, cancelled}; claw has none, so nothing is found.',
    handler: () => ({ found: false, cancelled: false }),
  });

  // Retry and dismiss act on a batch and answer per id, as OpenClaw does for an unknown task.
  for (const method of ['tasks.retry', 'tasks.dismiss'])
    api.registerGatewayMethod(method, {
      params: requiringIds('taskIds'),
      scope: 'operator.write',
      description: 'Per-task results {taskId, ok, reason}: claw has no background tasks, so none is found.',
      handler: (params: { taskIds: string[] }) => ({
        results: params.taskIds.map((taskId) => ({ taskId, ok: false, reason: TASK_NOT_FOUND })),
      }),
    });

  api.registerGatewayMethod('taskSuggestions.list', {
    params: { type: 'object' },
    scope: 'operator.read',
    description: 'Suggested tasks, empty: nothing in claw proposes tasks.',
    handler: () => ({ suggestions: [] }),
  });

  api.registerGatewayMethod('taskSuggestions.dismiss', {
    params: requiring('taskId'),
    scope: 'operator.write',
    description: 'Dismiss a suggested task: {taskId, dismissed: false}, as there are none.',
    handler: (params: { taskId: string }) => ({ taskId: params.taskId, dismissed: false }),
  });

  api.registerGatewayMethod('taskSuggestions.accept', {
    params: requiring('taskId'),
    scope: 'operator.admin',
    description: 'Start a suggested task: unavailable, claw has no task suggestions.',
    handler: () => absent('claw has no task suggestions to accept'),
  });

  api.registerGatewayMethod('progressCard.get', {
    params: requiring('sessionKey'),
    scope: 'operator.read',
    description: "A session's progress card: {card: null}, claw pins none.",
    handler: () => ({ card: null }),
  });

  api.registerGatewayMethod('progressCard.put', {
    params: requiring('sessionKey'),
    scope: 'operator.write',
    description: 'Pin or clear a progress card: unavailable, claw has no progress cards.',
    handler: () => absent('claw has no progress cards'),
  });

  api.registerGatewayMethod('progressCard.refresh', {
    params: requiring('sessionKey'),
    scope: 'operator.write',
    description: 'Refresh a progress card: unavailable, claw has no progress cards.',
    handler: () => absent('claw has no progress cards to refresh'),
  });
}
