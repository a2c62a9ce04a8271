/**
 * An HTTP(S) GET that cannot be turned against the user's own network: each URL, the first
 * and every redirect target, passes checkUrlAllowed and is connected to at the address that
 * was checked; redirects are counted and loops stopped; the body is read as a stream and cut
 * at a byte limit (after decompression, so a small gzip bomb is cut too); one deadline covers
 * the whole exchange. The "net" service's fetch.
 */
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import {
  SsrfBlockedError,
  type GuardedFetchOptions,
  type GuardedResponse,
  type PinnedTarget,
  type Resolver,
} from '../../sdk/net/guard.js';
import { checkUrlAllowed, pinnedLookup } from './ssrf.js';
import { nodeHttp } from '../../sdk/net/node-http.js';

/** The service's options, with a resolver in place of the DNS servers (the service builds it from them). */
export type FetchOptions = Omit<GuardedFetchOptions, 'dnsServers'> & { resolve?: Resolver };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function decoded(response: IncomingMessage): Readable {
  const encoding = String(response.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return response.pipe(createGunzip());
  if (encoding === 'deflate') return response.pipe(createInflate());
  if (encoding === 'br') return response.pipe(createBrotliDecompress());
  return response;
}

export async function guardedFetch(input: string, options: FetchOptions = {}): Promise<GuardedResponse> {
  const maxRedirects = options.maxRedirects ?? 3;
  const maxBytes = options.maxBytes ?? 2_000_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  const why = () =>
    deadline.aborted && !options.signal?.aborted
      ? new Error(`timed out after ${timeoutMs / 1000}s`)
      : new Error('aborted');
  const visited = new Set<string>();
  let current = input;
  for (let hop = 0; ; hop++) {
    if (signal.aborted) throw why();
    const check = await checkUrlAllowed(current, options.policy, options.resolve);
    if (!check.allowed)
      throw new SsrfBlockedError(hop === 0 ? check.reason : `redirect to ${current}: ${check.reason}`);
    visited.add(check.url.href);
    const response = await send(check.url, check.target, options.headers ?? {}, signal).catch((error: Error) => {
      throw signal.aborted ? why() : new Error(`request to ${check.url.href} failed: ${error.message}`);
    });
    const location = response.headers.location;
    if (REDIRECTS.has(response.statusCode ?? 0) && location) {
      response.destroy();
      let next: URL;
      try {
        next = new URL(location, check.url);
      } catch {
        throw new Error(`${check.url.href} redirected to an invalid URL: ${location.slice(0, 200)}`);
      }
      if (visited.has(next.href))
        throw new Error(`redirect loop: ${check.url.href} → ${next.href} was already visited`);
      if (hop + 1 > maxRedirects)
        throw new Error(`too many redirects (more than ${maxRedirects}); the last one pointed to ${next.href}`);
      current = next.href;
      continue;
    }
    const { body, truncated } = await readCapped(response, maxBytes, signal).catch((error: Error) => {
      throw signal.aborted ? why() : new Error(`reading ${check.url.href} failed: ${error.message}`);
    });
    return {
      url: input,
      finalUrl: check.url.href,
      status: response.statusCode ?? 0,
      statusText: response.statusMessage ?? '',
      headers: response.headers,
      body,
      truncated,
      address: check.target.address,
    };
  }
}

function send(
  url: URL,
  target: PinnedTarget,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const request = url.protocol === 'https:' ? httpsRequest : nodeHttp().request;
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'GET',
      headers: { 'accept-encoding': 'gzip, deflate, br', ...headers },
      lookup: pinnedLookup(target),
      // A fresh connection per hop: a pooled socket could belong to another checked address.
      agent: false,
      signal,
    });
    req.once('response', resolve);
    req.once('error', reject);
    req.end();
  });
}

function readCapped(
  response: IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const stream = decoded(response);
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (truncated: boolean) => {
      signal.removeEventListener('abort', onAbort);
      resolve({ body: Buffer.concat(chunks, size), truncated });
    };
    const onAbort = () => {
      response.destroy();
      reject(new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    stream.on('data', (chunk: Buffer) => {
      const room = maxBytes - size;
      if (chunk.length >= room) {
        chunks.push(chunk.subarray(0, room));
        size += room;
        // Enough: stop reading, drop the connection, and do not decompress the rest.
        stream.removeAllListeners('data');
        response.destroy();
        if (stream !== response) stream.destroy();
        stop(chunk.length > room || !response.complete);
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    stream.once('end', () => stop(false));
    stream.once('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
  });
}
