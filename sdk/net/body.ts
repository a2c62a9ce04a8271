/**
 * Reading an HTTP request body with a size cap and a deadline, for plugins that serve HTTP
 * routes (webhooks, POST /tools/invoke): a body over the cap is refused as soon as it is
 * known to be (from Content-Length, or while streaming), and one that trickles in is cut off.
 */
import type { IncomingMessage } from 'node:http';

/** Why a body could not be read: `status` is the HTTP answer (413 too big, 408 too slow). */
export class HttpBodyError extends Error {
  constructor(
    readonly status: 413 | 408,
    message: string,
  ) {
    super(message);
  }
}

/** `limitName` names the limit in messages (a config key such as "hooks.maxBodyBytes"). */
export function readRequestBody(
  req: IncomingMessage,
  options: { limit: number; timeoutMs: number; limitName?: string },
): Promise<Buffer> {
  const { limit, timeoutMs } = options;
  const named = options.limitName ? `${options.limitName} (${limit} bytes)` : `the ${limit}-byte limit`;
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      req.resume();
      reject(new HttpBodyError(413, `request body is ${declared} bytes, over ${named}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      reject(new HttpBodyError(408, `the request body did not arrive within ${timeoutMs / 1000} s`));
      req.destroy();
    }, timeoutMs);
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        clearTimeout(timer);
        reject(new HttpBodyError(413, `request body is over ${named}`));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
