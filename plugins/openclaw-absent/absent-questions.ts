/**
 * OpenClaw's agent questions (an agent asks the operator a structured question and waits for
 * the answer), in OpenClaw's shapes. claw's agents have no question tool, so none is ever
 * pending: the list is empty and every question id is unknown, answered as OpenClaw answers
 * an id it does not hold. OpenClaw scopes these to operator.questions, a scope claw does not
 * grant; they take operator.write, which OpenClaw's session write methods also need.
 */
import { ErrorCodes, ProtocolError, type PluginApi } from '../../sdk/index.js';
import { requiring } from './absent-kit.js';

function notFound(id: string): never {
  throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `question '${id}' was not found`, {
    reason: 'QUESTION_NOT_FOUND',
  });
}

export function registerAbsentQuestions(api: PluginApi): void {
  api.registerGatewayMethod('question.list', {
    params: { type: 'object' },
    scope: 'operator.write',
    description: 'Pending agent questions, empty: claw agents ask none.',
    handler: () => ({ questions: [] }),
  });

  api.registerGatewayMethod('question.get', {
    params: requiring('id'),
    scope: 'operator.write',
    description: 'One agent question: claw agents ask none, so every id is unknown.',
    handler: (params: { id: string }) => notFound(params.id),
  });

  api.registerGatewayMethod('question.resolve', {
    params: requiring('id'),
    scope: 'operator.write',
    description: 'Answer or cancel an agent question: claw agents ask none, so every id is unknown.',
    handler: (params: { id: string }) => notFound(params.id),
  });
}
