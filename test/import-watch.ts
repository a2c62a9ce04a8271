/**
 * Records every module URL Node's loader resolves in this process that contains `fragment`,
 * so a test can observe (not assume) that a heavy package was not imported yet.
 * Register before anything could import the package.
 */
import { randomBytes } from 'node:crypto';
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

export interface WatchedImports extends Array<string> {
  /**
   * Resolves once every import resolved before the call has been reported. The hook runs on
   * the loader thread and reports through a port; a marker module imported now is reported
   * through the same port after them, so its arrival is the signal (not a pause).
   */
  settled(): Promise<void>;
}

export function watchImports(fragment: string): WatchedImports {
  const seen = [] as string[] as WatchedImports;
  const marker = `claw-import-watch-${randomBytes(6).toString('hex')}`;
  const waiting = new Map<string, () => void>();
  let markers = 0;
  const channel = new MessageChannel();
  channel.port1.on('message', (url: string) => {
    const done = [...waiting].find(([id]) => url.includes(id));
    if (done) {
      waiting.delete(done[0]);
      done[1]();
    } else seen.push(url);
  });
  channel.port1.unref();
  const hook = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (result.url.includes(${JSON.stringify(fragment)}) || result.url.includes(${JSON.stringify(marker)})) port.postMessage(result.url);
  return result;
}`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`, import.meta.url, {
    data: { port: channel.port2 },
    transferList: [channel.port2],
  });
  // Not enumerable: `expect(seen).toEqual([])` compares the URLs only.
  Object.defineProperty(seen, 'settled', {
    enumerable: false,
    value: async () => {
      const id = `${marker}-${++markers}`;
      const arrived = new Promise<void>((resolve) => waiting.set(id, resolve));
      await import(`data:text/javascript,${encodeURIComponent(`export default ${JSON.stringify(id)};`)}`);
      await arrived;
    },
  });
  return seen;
}
