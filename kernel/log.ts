/**
 * The kernel's logging interface: levels and child loggers. Whoever boots the kernel hands
 * it one (the CLI prints warnings, the gateway writes its log file, tests capture records; the
 * SDK's createLogger is the plain one), and the kernel puts it behind the redactor.
 */
export interface Logger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
}

export interface Redactor {
  /** Mask every known secret and secret-shaped value in `input`. */
  text(input: string): string;
  /**
   * Deep: every string in plain objects and arrays; other objects and image bytes are left
   * alone. The same reference when nothing changed, so an innocent frame allocates nothing.
   */
  value<T>(input: T): T;
  /** Register a secret found at run time (a token read from a file, a minted key). */
  add(secret: string | undefined): void;
}

const ignore = () => {};
export const silentLogger: Logger = {
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
  child: () => silentLogger,
};

/**
 * `base` behind a redactor: every message, every string in `data` and every binding is
 * masked before the sink sees it, so no plugin can log a secret by accident.
 */
export function redactingLogger(base: Logger, redact: Pick<Redactor, 'text' | 'value'>): Logger {
  const data = (value: Record<string, unknown> | undefined) => (value === undefined ? undefined : redact.value(value));
  return {
    debug: (message, more) => base.debug(redact.text(message), data(more)),
    info: (message, more) => base.info(redact.text(message), data(more)),
    warn: (message, more) => base.warn(redact.text(message), data(more)),
    error: (message, more) => base.error(redact.text(message), data(more)),
    child: (bindings) => redactingLogger(base.child(redact.value(bindings)), redact),
  };
}
