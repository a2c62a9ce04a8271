/**
 * Records every module URL Node's loader resolves in this process that contains `fragment`,
 * so a test can observe (not assume) that a heavy package was not imported yet.
 * Register before anything could import the package.
 */
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

export function watchImports(fragment: string): string[] {
  const seen: string[] = [];
  const channel = new MessageChannel();
  channel.port1.on('message', (url: string) => seen.push(url));
  channel.port1.unref();
  const hook = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (result.url.includes(${JSON.stringify(fragment)})) port.postMessage(result.url);
  return result;
}`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`, import.meta.url, { data: { port: channel.port2 }, transferList: [channel.port2] });
  return seen;
}
