/**
 * The script the canvas host puts at the top of every HTML page it serves:
 *
 * - Live reload: an EventSource on the folder's `.reload` stream; a change under the folder
 *   reloads the page.
 * - The bridge to a canvas node that shows the page in an iframe (claw's web UI): the page is
 *   an opaque origin, so its parent cannot reach into it; it asks by postMessage instead
 *   (`eval`, `snapshot`) and the page answers the same way. Only messages from the parent
 *   window are heard. A page loaded on its own (no parent) just never gets any.
 *
 * Snapshots rasterize the DOM as an SVG foreignObject drawn onto a canvas. Stylesheets and
 * images the page loads from its folder are inlined first (the host sends them with CORS
 * headers so the opaque page may read them); what cannot be serialized is missing from the
 * picture: <canvas> contents that are tainted, cross-origin images and fonts, iframes, video
 * frames, and the scroll position (the top of the page is drawn).
 */

// The page's globals: this module is compiled without the DOM library (it runs in the page,
// never in Node), so they are declared loosely here.
declare const window: any;
declare const document: any;
declare const location: any;
declare const EventSource: any;
declare const FileReader: any;
declare const XMLSerializer: any;
declare const Image: any;
declare const getComputedStyle: any;

function pageScript(reloadUrl: string): void {
  const MARK = 'openclaw-canvas';
  const source = new EventSource(reloadUrl);
  source.addEventListener('reload', () => location.reload());

  const parentWindow = window.parent;
  if (parentWindow === window) return;
  const post = (message: Record<string, unknown>) => parentWindow.postMessage({ [MARK]: 1, ...message }, '*');

  const describe = (value: unknown): string => {
    if (typeof value === 'string') return value;
    if (value === undefined) return 'undefined';
    try {
      const json = JSON.stringify(value);
      if (json !== undefined) return json;
    } catch {
      // Cycles, BigInt: fall back to the plain string form.
    }
    return String(value);
  };

  const asDataUrl = async (url: string): Promise<string> => {
    const blob = await (await fetch(url)).blob();
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result));
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(blob);
    });
  };

  const snapshot = async (options: { format?: string; maxWidth?: number; quality?: number }) => {
    const jpeg = options.format === 'jpeg' || options.format === 'jpg';
    const width = Math.max(1, window.innerWidth);
    const height = Math.max(1, window.innerHeight);
    const clone = document.documentElement.cloneNode(true);
    for (const script of Array.from<any>(clone.querySelectorAll('script'))) script.remove();
    const links = Array.from<any>(clone.querySelectorAll('link[rel~="stylesheet"]'));
    await Promise.all(
      links.map(async (link) => {
        try {
          const css = await (await fetch(new URL(link.getAttribute('href') ?? '', location.href))).text();
          const style = document.createElement('style');
          style.textContent = css;
          link.replaceWith(style);
        } catch {
          link.remove();
        }
      }),
    );
    const liveImages = Array.from<any>(document.querySelectorAll('img'));
    const images = Array.from<any>(clone.querySelectorAll('img'));
    await Promise.all(
      images.map(async (image, index) => {
        try {
          image.setAttribute('src', await asDataUrl(liveImages[index]?.currentSrc || image.src));
        } catch {
          image.removeAttribute('src');
        }
      }),
    );
    const liveCanvases = Array.from<any>(document.querySelectorAll('canvas'));
    Array.from<any>(clone.querySelectorAll('canvas')).forEach((canvas, index) => {
      try {
        const image = document.createElement('img');
        image.src = liveCanvases[index].toDataURL();
        image.width = liveCanvases[index].width;
        image.height = liveCanvases[index].height;
        canvas.replaceWith(image);
      } catch {
        // A tainted canvas stays blank in the picture.
      }
    });
    const markup = new XMLSerializer().serializeToString(clone);
    const svg =
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
      `<foreignObject x="0" y="0" width="100%" height="100%">${markup}</foreignObject></svg>`;
    const picture = new Image();
    picture.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
    await picture.decode();
    const scale = options.maxWidth && options.maxWidth < width ? options.maxWidth / width : 1;
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(width * scale));
    canvas.height = Math.max(1, Math.round(height * scale));
    const context = canvas.getContext('2d');
    context.fillStyle = getComputedStyle(document.body ?? document.documentElement).backgroundColor || '#fff';
    if (jpeg || context.fillStyle === 'rgba(0, 0, 0, 0)') context.fillStyle = '#fff';
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.drawImage(picture, 0, 0, canvas.width, canvas.height);
    const url = canvas.toDataURL(jpeg ? 'image/jpeg' : 'image/png', options.quality);
    return { format: jpeg ? 'jpeg' : 'png', base64: url.slice(url.indexOf(',') + 1) };
  };

  window.addEventListener('message', (event: any) => {
    if (event.source !== parentWindow) return;
    const data = event.data as Record<string, unknown> | null;
    if (!data || data[MARK] !== 1 || typeof data.id !== 'string') return;
    const id = data.id;
    const work =
      data.op === 'eval'
        ? (async () => ({ result: describe(await (0, eval)(String(data.javaScript ?? ''))) }))()
        : data.op === 'snapshot'
          ? snapshot(data as { format?: string; maxWidth?: number; quality?: number })
          : Promise.reject(new Error(`unknown canvas request "${String(data.op)}"`));
    work.then(
      (result) => post({ id, ok: true, result }),
      (error: unknown) => post({ id, ok: false, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  const ready = () => post({ op: 'ready', href: location.href });
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ready);
  else ready();
}

/** The `<script>` element to inject, bound to this page's reload stream. */
export function pageScriptTag(reloadUrl: string): string {
  return `<script>(${pageScript.toString()})(${JSON.stringify(reloadUrl)});</script>`;
}

/** `html` with the script placed first in its head (or first of all when it has none). */
export function injectPageScript(html: string, reloadUrl: string): string {
  const tag = pageScriptTag(reloadUrl);
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + tag + html.slice(head.index + head[0].length);
  const htmlTag = /<html(\s[^>]*)?>/i.exec(html);
  if (htmlTag) {
    const at = htmlTag.index + htmlTag[0].length;
    return html.slice(0, at) + tag + html.slice(at);
  }
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  return doctype ? doctype[0] + tag + html.slice(doctype[0].length) : tag + html;
}
