/**
 * OpenAI's in-stream errors. The streaming POST itself and the SSE/JSON plumbing are the
 * SDK's (sdk/provider-http.ts), shared by every HTTP provider.
 */
import { streamFailure as classify, type ModelError } from '../../sdk/index.js';

export { eventJson, postSse } from '../../sdk/index.js';

// Error codes OpenAI-style servers put in a 200 stream, translated to the HTTP status the
// same failure would have had, so the SDK's classifier decides the kind in one place.
const STATUS_BY_CODE: Record<string, number> = {
  invalid_api_key: 401,
  authentication_error: 401,
  permission_error: 403,
  insufficient_quota: 402,
  rate_limit_exceeded: 429,
  rate_limit_error: 429,
  server_error: 500,
  internal_error: 500,
  service_unavailable: 503,
  overloaded: 529,
  invalid_request_error: 400,
  invalid_prompt: 400,
  context_length_exceeded: 400,
};

/** A failure reported inside an otherwise successful stream (`error` chunk or event). */
export function streamFailure(
  provider: string,
  error: { code?: unknown; type?: unknown; message?: unknown } | undefined,
): ModelError {
  return classify(provider, error, STATUS_BY_CODE);
}
