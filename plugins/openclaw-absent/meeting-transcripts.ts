/**
 * OpenClaw's `transcripts.*`: transcripts of meetings and calls (live audio, captions,
 * recordings) from transcription providers, with speakers and summaries. claw has no
 * transcription providers — its session transcripts are the chat histories the sessions
 * methods serve — so the status says none is enabled, the list is empty, and a selector
 * can name nothing: reading one is an error, summarising one is UNAVAILABLE.
 */
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';

/** OpenClaw's clients may send params newer than claw knows: tolerated, not refused. */
const ANY_PARAMS: JsonSchema = { type: 'object' };

const SELECTOR_PARAMS: JsonSchema = {
  type: 'object',
  required: ['selector'],
  properties: { selector: { type: 'string', minLength: 1 } },
};

const NONE = 'claw has no meeting transcripts (no transcription provider)';

function unknownSelector(): never {
  throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `unknown transcript selector: ${NONE}`);
}

export function registerMeetingTranscripts(api: PluginApi): void {
  api.registerGatewayMethod('transcripts.status', {
    scope: 'operator.read',
    params: ANY_PARAMS,
    description: 'Meeting transcription: not enabled, no providers.',
    handler: () => ({ enabled: false, providers: [] }),
  });
  api.registerGatewayMethod('transcripts.list', {
    scope: 'operator.read',
    params: ANY_PARAMS,
    description: 'Meeting transcripts: none.',
    handler: () => ({ sessions: [], nextCursor: null }),
  });
  api.registerGatewayMethod('transcripts.get', {
    scope: 'operator.read',
    params: SELECTOR_PARAMS,
    description: 'One meeting transcript: claw has none, so every selector is unknown.',
    handler: unknownSelector,
  });
  api.registerGatewayMethod('transcripts.export', {
    scope: 'operator.read',
    params: SELECTOR_PARAMS,
    description: 'A meeting transcript as a file: claw has none, so every selector is unknown.',
    handler: unknownSelector,
  });
  api.registerGatewayMethod('transcripts.summarize', {
    scope: 'operator.write',
    params: ANY_PARAMS,
    description: `UNAVAILABLE: ${NONE}.`,
    handler: () => {
      throw new ProtocolError(ErrorCodes.UNAVAILABLE, NONE);
    },
  });
}
