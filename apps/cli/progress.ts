/**
 * Progress for steps that can take a while (an image build, a browser's first start, an npm
 * install), always on stderr so stdout stays clean for `--json`. A terminal gets one line that
 * redraws (spinner, label, seconds so far) and ends as "✓ label … done in 29 s"; anything else
 * (a pipe, a log file, CI) gets two plain lines: "label …" once the step has taken `afterMs`,
 * then "label … done in 29 s". A step that ends sooner prints nothing.
 */
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const REDRAW_MS = 120;
export const DEFAULT_AFTER_MS = 2000;

/** The spinner drawn on each terminal stream now, so other stderr lines can be written above it. */
const spinners = new Map<NodeJS.WritableStream, () => void>();

const isTty = (stream: NodeJS.WritableStream) => (stream as { isTTY?: boolean }).isTTY === true;

export function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
}

export async function withProgress<T>(
  stream: NodeJS.WritableStream,
  label: string,
  work: () => Promise<T>,
  options: { afterMs?: number } = {},
): Promise<T> {
  const tty = isTty(stream);
  const started = performance.now();
  const elapsed = () => formatSeconds(performance.now() - started);
  let shown = false;
  let frame = 0;
  let ticker: NodeJS.Timeout | undefined;
  const draw = () => stream.write(`\r\x1b[K${FRAMES[frame++ % FRAMES.length]} ${label} … ${elapsed()}`);
  const show = () => {
    shown = true;
    if (!tty) {
      stream.write(`${label} …\n`);
      return;
    }
    spinners.set(stream, draw);
    draw();
    ticker = setInterval(draw, REDRAW_MS);
    ticker.unref();
  };
  const afterMs = options.afterMs ?? DEFAULT_AFTER_MS;
  const timer = afterMs > 0 ? setTimeout(show, afterMs) : undefined;
  timer?.unref();
  if (afterMs <= 0) show();
  const finish = (ok: boolean) => {
    clearTimeout(timer);
    if (!shown) return;
    const outcome = ok ? `done in ${elapsed()}` : `failed after ${elapsed()}`;
    if (!tty) {
      stream.write(`${label} … ${outcome}\n`);
      return;
    }
    clearInterval(ticker);
    spinners.delete(stream);
    stream.write(`\r\x1b[K${ok ? '✓' : '✗'} ${label} … ${outcome}\n`);
  };
  try {
    const result = await work();
    finish(true);
    return result;
  } catch (error) {
    finish(false);
    throw error;
  }
}

/** Writes `text` to `stream`; on a terminal with a spinner running, above the spinner, which is redrawn below it. */
export function writeAbove(stream: NodeJS.WritableStream, text: string): void {
  const redraw = spinners.get(stream);
  if (!redraw) {
    stream.write(text);
    return;
  }
  stream.write(`\r\x1b[K${text}${text.endsWith('\n') ? '' : '\n'}`);
  redraw();
}
