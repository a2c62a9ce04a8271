/**
 * matrix-js-sdk, loaded on first use, and the few client-server calls claw makes through it.
 *
 * claw uses the SDK's HTTP layer (authentication, error parsing into MatrixError with the
 * server's `retry_after_ms`, media upload) and runs the /sync loop itself: the SDK's own
 * loop advances its sync token as soon as it has emitted a batch's events, before claw has
 * journaled them, which is exactly the window in which a crash would lose a message.
 */
import { setMaxListeners } from 'node:events';
import { runtimeDependencyLoader, type RuntimeDependency } from '../../sdk/index.js';

export type MatrixSdk = typeof import('matrix-js-sdk');
type SdkClient = ReturnType<MatrixSdk['createClient']>;

export const MATRIX_SDK: RuntimeDependency = { name: 'matrix-js-sdk', version: '37.5.0', approxSizeMb: 14 };

export const loadMatrixSdk = runtimeDependencyLoader<MatrixSdk>(
  MATRIX_SDK,
  'createClient',
  'claw plugins enable channel-matrix',
);

export type HttpMethod = 'GET' | 'PUT' | 'POST';

/** A request the homeserver has not answered in this long has failed. */
const REQUEST_TIMEOUT_MS = 60_000;

export interface RequestOptions {
  signal?: AbortSignal;
  /** The client gives up after this long (the /sync long-poll needs more than its server timeout). */
  timeoutMs?: number;
}

/** The calls the channel makes, so tests and the sender see one small surface. */
export interface MatrixApi {
  readonly baseUrl: string;
  request<T = any>(
    method: HttpMethod,
    path: string,
    query?: Record<string, string>,
    body?: unknown,
    options?: RequestOptions,
  ): Promise<T>;
  upload(data: Buffer, fileName: string, mimeType: string): Promise<string>;
  /** The authenticated download URL of an mxc:// URI on this homeserver. */
  downloadUrl(mxc: string): string | undefined;
  readonly accessToken: string;
}

/** A logger for the SDK that keeps its chatter out of claw's log; warnings and errors go to `warn`. */
function quietLogger(warn: (line: string) => void): any {
  const logger: any = {
    trace: () => undefined,
    debug: () => undefined,
    info: () => undefined,
    warn: (...parts: unknown[]) => warn(parts.map(String).join(' ')),
    error: (...parts: unknown[]) => warn(parts.map(String).join(' ')),
    getChild: () => logger,
  };
  return logger;
}

export function createMatrixApi(
  sdk: MatrixSdk,
  options: { baseUrl: string; accessToken: string; userId?: string; deviceId?: string; warn: (line: string) => void },
): MatrixApi {
  const client: SdkClient = sdk.createClient({
    baseUrl: options.baseUrl,
    accessToken: options.accessToken,
    ...(options.userId ? { userId: options.userId } : {}),
    ...(options.deviceId ? { deviceId: options.deviceId } : {}),
    logger: quietLogger(options.warn),
  });
  // Every request listens on the client's one abort signal while it runs: many replies in
  // flight at once are normal here, not the listener leak Node would warn about.
  const shared = (client.http as unknown as { abortController?: AbortController }).abortController?.signal;
  if (shared) setMaxListeners(1000, shared);
  return {
    baseUrl: options.baseUrl,
    accessToken: options.accessToken,
    request: async (method, path, query, body, opts) => {
      // Our own deadline: the SDK's `localTimeoutMs` leaves a timer running after the answer,
      // which keeps a finished CLI process alive and piles up in a busy gateway.
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(new Error('timed out')), opts?.timeoutMs ?? REQUEST_TIMEOUT_MS);
      const cancel = () => deadline.abort(opts?.signal?.reason);
      opts?.signal?.addEventListener('abort', cancel, { once: true });
      try {
        return await client.http.authedRequest(
          method as any,
          path,
          query,
          body as any,
          {
            abortSignal: deadline.signal,
          } as any,
        );
      } finally {
        clearTimeout(timer);
        opts?.signal?.removeEventListener('abort', cancel);
      }
    },
    upload: async (data, fileName, mimeType) =>
      (
        await client.uploadContent(new Blob([new Uint8Array(data)]), {
          name: fileName,
          type: mimeType,
          includeFilename: true,
        })
      ).content_uri,
    downloadUrl: (mxc) => client.mxcUrlToHttp(mxc, undefined, undefined, undefined, false, true, true) ?? undefined,
  };
}

/** A password login through the SDK: the new access token and device. */
export async function passwordLogin(
  sdk: MatrixSdk,
  options: {
    baseUrl: string;
    userId: string;
    password: string;
    deviceId?: string;
    deviceName: string;
    warn: (line: string) => void;
  },
): Promise<{ accessToken: string; deviceId: string; userId: string }> {
  const client = sdk.createClient({ baseUrl: options.baseUrl, logger: quietLogger(options.warn) });
  const answer = await client.loginRequest({
    type: 'm.login.password',
    identifier: { type: 'm.id.user', user: options.userId },
    password: options.password,
    ...(options.deviceId ? { device_id: options.deviceId } : {}),
    initial_device_display_name: options.deviceName,
  });
  return { accessToken: answer.access_token, deviceId: answer.device_id, userId: answer.user_id };
}

/** `M_LIMIT_EXCEEDED`'s wait, from the body's `retry_after_ms` or a Retry-After header. */
export function retryAfterMs(error: unknown): number | undefined {
  const failure = error as { isRateLimitError?: () => boolean; getRetryAfterMs?: () => number | null };
  if (!failure?.isRateLimitError?.()) return undefined;
  return failure.getRetryAfterMs?.() ?? 1000;
}

/** A failure in words: the server's errcode and message, or the transport's. */
export function describeError(error: unknown): string {
  const failure = error as { errcode?: string; httpStatus?: number; data?: { error?: string }; message?: string };
  if (failure?.errcode) return `${failure.errcode}${failure.data?.error ? ` (${failure.data.error})` : ''}`;
  if (failure?.httpStatus) return `HTTP ${failure.httpStatus}`;
  return failure?.message ?? String(error);
}

export function httpStatus(error: unknown): number | undefined {
  return (error as { httpStatus?: number })?.httpStatus;
}

export function isAuthRejected(error: unknown): boolean {
  const code = (error as { errcode?: string })?.errcode;
  return code === 'M_UNKNOWN_TOKEN' || code === 'M_MISSING_TOKEN' || code === 'M_USER_DEACTIVATED';
}
