/**
 * Anthropic's in-stream errors. The streaming POST itself and the SSE/JSON plumbing are
 * the SDK's (sdk/provider-http.ts), shared by every HTTP provider.
 */
import { streamFailure as classify, type ModelError } from '../../sdk/index.js';

export { eventJson, postSse } from '../../sdk/index.js';

// Anthropic's error types, translated to the HTTP status the same failure would have had,
// so the SDK's classifier decides the kind in one place.
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** A failure reported inside an otherwise successful stream (an `error` event). */
export function streamFailure(provider: string, error: { type?: unknown; message?: unknown } | undefined): ModelError {
  return classify(provider, { type: error?.type, message: error?.message }, STATUS_BY_TYPE);
}
