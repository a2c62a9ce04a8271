/**
 * Session boards, canvas documents and transcript artifacts, as OpenClaw's Control UI asks for
 * them: claw's boards are always empty (no tabs, no widgets), it hosts no canvas documents and
 * extracts no artifacts from transcripts. See absent-kit.ts for the rule these follow.
 */
import {
  ErrorCodes,
  ProtocolError,
  type PluginApi,
  lacks,
  registerMethodTable,
  requiredMethodString,
  type MethodParams,
} from '../../sdk/index.js';
import { unavailable } from './absent-kit.js';

function notFound(message: string, details?: Record<string, unknown>): never {
  throw new ProtocolError(ErrorCodes.INVALID_REQUEST, message, details);
}

/** As OpenClaw: artifacts are looked up within a session, a run or a task. */
function requireArtifactScope(params: MethodParams): void {
  if (['sessionKey', 'runId', 'taskId'].some((key) => typeof params[key] === 'string' && params[key])) return;
  notFound('artifacts require one of sessionKey, runId, or taskId', { type: 'artifact_query_unsupported' });
}

export function registerAbsentCanvas(api: PluginApi): void {
  registerMethodTable(api, {
    'board.get': {
      scope: 'operator.read',
      description: "A session's board in OpenClaw's shape: always empty, as claw's web UI hosts no widgets.",
      handler: (params, _ctx, method) => ({
        sessionKey: requiredMethodString(method, params, 'sessionKey'),
        revision: 0,
        tabs: [],
        widgets: [],
      }),
    },
    'board.widget.appView': {
      scope: 'operator.read',
      description: "A board widget's app view: claw's boards have no widgets, so none is found.",
      handler: (params, _ctx, method) =>
        notFound(`board MCP App widget not found: ${requiredMethodString(method, params, 'name')}`),
    },
    'board.prompt.authorize': {
      scope: 'operator.read',
      description: 'Authorize a board widget prompt: claw issues no board view tickets, so none is valid.',
      handler: () => notFound('unknown board view ticket: claw has no session boards'),
    },
    'board.data.read': {
      scope: 'operator.read',
      description: 'Read a board widget data binding: claw issues no board view tickets, so none is valid.',
      handler: () => notFound('unknown board view ticket: claw has no session boards'),
    },
    'board.action': unavailable('session boards', 'operator.write', 'Run a board widget action (claw has no boards).'),
    'board.event': unavailable('session boards', 'operator.write', 'Send a board widget event (claw has no boards).'),
    'canvas.document.view': {
      scope: 'operator.read',
      description: 'Show a stored canvas document: claw stores none.',
      handler: (params, _ctx, method) => {
        requiredMethodString(method, params, 'docId');
        return lacks('canvas documents');
      },
    },
    'canvas.document.preview': unavailable(
      'canvas host',
      'operator.read',
      'Preview HTML in the canvas sandbox (claw has no canvas host).',
      ['html'],
    ),
    'artifacts.list': {
      scope: 'operator.read',
      description: "Files and images found in a session's transcript: none, as claw extracts no artifacts.",
      handler: (params) => {
        requireArtifactScope(params);
        return { artifacts: [] };
      },
    },
    'artifacts.download': {
      scope: 'operator.read',
      description: 'Download one transcript artifact: claw lists none, so none is found.',
      handler: (params, _ctx, method) => {
        requireArtifactScope(params);
        const artifactId = requiredMethodString(method, params, 'artifactId');
        return notFound('artifact not found', { type: 'artifact_not_found', artifactId });
      },
    },
  });
}
