/**
 * OpenClaw's `POST /tools/invoke`: one tool call over HTTP, behind gateway auth, through the
 * same path as the `tools.invoke` method (tools-invoke.ts) and so the kernel's tool choke
 * point. A bearer of the gateway's shared secret is the owner, as in OpenClaw; even so, tools
 * that run commands, spawn agents or steer the gateway are refused here unless
 * `gateway.tools.allow` lets one through, and `gateway.tools.deny` adds more.
 *
 *   200 {ok: true, result}   400 bad request or tool error   403 blocked by policy
 *   404 no such tool here    405 not POST   408 body too slow   413 body too big   500 failure
 */
import type { ServerResponse } from 'node:http';
import { ProtocolError, type PluginApi } from '../../sdk/index.js';
import { HttpBodyError, readRequestBody } from '../../sdk/net/index.js';
import { invokeForOperator, type InvokeParams } from './tools-invoke.js';

export const TOOLS_INVOKE_PATH = '/tools/invoke';
const MAX_BODY_BYTES = 2 * 1024 * 1024;
const BODY_TIMEOUT_MS = 30_000;

/** OpenClaw's default HTTP deny list: a shell, file mutation, agents spawned, the control plane. */
export const HTTP_DENIED_TOOLS: readonly string[] = [
  'exec',
  'process',
  'spawn',
  'shell',
  'fs_write',
  'fs_delete',
  'fs_move',
  'write',
  'edit',
  'apply_patch',
  'sessions_spawn',
  'sessions_send',
  'cron',
  'gateway',
  'nodes',
];

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** The request body as tools.invoke params, or a 400 naming the field that is wrong. */
function parseParams(body: Buffer): InvokeParams {
  let raw: unknown;
  try {
    raw = JSON.parse(body.toString('utf8'));
  } catch {
    throw new HttpProblem(400, 'invalid_request', 'the body is not JSON');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new HttpProblem(400, 'invalid_request', 'the body must be a JSON object');
  const fields = raw as Record<string, unknown>;
  for (const key of ['name', 'tool', 'action', 'sessionKey', 'agentId', 'idempotencyKey'])
    if (fields[key] !== undefined && typeof fields[key] !== 'string')
      throw new HttpProblem(400, 'invalid_request', `${key} must be a string`);
  if (
    fields.args !== undefined &&
    (typeof fields.args !== 'object' || fields.args === null || Array.isArray(fields.args))
  )
    throw new HttpProblem(400, 'invalid_request', 'args must be an object');
  if (!fields.name && !fields.tool) throw new HttpProblem(400, 'invalid_request', 'tool (or name) is required');
  return fields as InvokeParams;
}

export function registerToolsInvokeHttp(api: PluginApi): void {
  const denied = (name: string): boolean => {
    const tools = (api.kernel.config().gateway as { tools?: { allow?: string[]; deny?: string[] } } | undefined)?.tools;
    if (tools?.deny?.includes(name)) return true;
    return HTTP_DENIED_TOOLS.includes(name) && !tools?.allow?.includes(name);
  };
  api.registerHttpRoute({
    method: '*',
    path: TOOLS_INVOKE_PATH,
    handler: async (req, res) => {
      try {
        if (req.method !== 'POST') {
          req.resume();
          res.setHeader('allow', 'POST');
          throw new HttpProblem(405, 'method_not_allowed', `${TOOLS_INVOKE_PATH} takes POST`);
        }
        const params = parseParams(await readRequestBody(req, { limit: MAX_BODY_BYTES, timeoutMs: BODY_TIMEOUT_MS }));
        const name = (params.name ?? params.tool ?? '').trim();
        if (denied(name))
          throw new HttpProblem(
            404,
            'not_found',
            `tool "${name}" is not available over HTTP (the gateway's HTTP deny list; gateway.tools.allow lifts it)`,
          );
        const abort = new AbortController();
        res.on('close', () => {
          if (!res.writableFinished) abort.abort();
        });
        const outcome = await invokeForOperator(api, params, { admin: true, signal: abort.signal });
        if (outcome.ok) return send(res, 200, { ok: true, result: outcome.output });
        const status = outcome.error.code === 'not_found' ? 404 : outcome.error.code === 'forbidden' ? 403 : 400;
        send(res, status, {
          ok: false,
          error: { type: outcome.error.code, message: outcome.error.message },
          ...(outcome.output ? { result: outcome.output } : {}),
        });
      } catch (error) {
        if (error instanceof HttpProblem)
          return send(res, error.status, { ok: false, error: { type: error.type, message: error.message } });
        if (error instanceof HttpBodyError) {
          const type = error.status === 413 ? 'payload_too_large' : 'timeout';
          return send(res, error.status, { ok: false, error: { type, message: error.message } });
        }
        if (error instanceof ProtocolError)
          return send(res, 400, { ok: false, error: { type: 'invalid_request', message: error.message } });
        api.logger.error(`POST ${TOOLS_INVOKE_PATH} failed: ${(error as Error).message}`);
        send(res, 500, { ok: false, error: { type: 'internal_error', message: 'the tool call failed unexpectedly' } });
      }
    },
  });
}
