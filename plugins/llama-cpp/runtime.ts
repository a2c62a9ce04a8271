/**
 * The part of the provider that talks to llama.cpp. node-llama-cpp (and its native addon)
 * is imported on the first request, not when the plugin loads: a kernel that never asks
 * this provider for a completion never pays for it. Every type import below is erased at
 * compile time.
 */
import type {
  ChatHistoryItem,
  ChatWrapper,
  Llama,
  LlamaChat,
  LlamaContext,
  LlamaContextSequence,
  LlamaModel,
} from 'node-llama-cpp';
import { ModelError, type Logger, type ModelRequest, type ModelStreamEvent, type StopReason } from '../../sdk/index.js';
import { toChatHistory } from './history.js';

export type LlamaModule = typeof import('node-llama-cpp');

export const PROVIDER_ID = 'llama-cpp';

export interface RuntimeOptions {
  contextSize: number;
  /** Evaluation threads; unset means one per math core the machine reports. */
  threads?: number;
  gpu: false | 'auto';
  logger: Logger;
}

export interface GenerateOptions {
  modelPath: string;
  request: ModelRequest;
  maxTokens: number;
  signal?: AbortSignal;
  /**
   * Load the file for this request only and free it afterwards (a live test of a file not
   * configured yet), unless it is already loaded: then the loaded model answers.
   */
  once?: boolean;
}

interface LoadedModel {
  model: LlamaModel;
  context: LlamaContext;
  sequence: LlamaContextSequence;
  chat: LlamaChat;
  turns: Turns;
}

function abortedError(cause?: unknown): ModelError {
  return new ModelError('aborted', `${PROVIDER_ID} request aborted`, { provider: PROVIDER_ID, cause });
}

/** The kernel stopped the provider (dispose) under a running request. */
function stopped(cause?: unknown): ModelError {
  return new ModelError('aborted', `${PROVIDER_ID} provider stopped`, { provider: PROVIDER_ID, cause });
}

/** Resolves with `promise`, or rejects as soon as `signal` aborts (the work itself goes on). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortedError(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortedError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * One request at a time per loaded model: the context has a single sequence (its KV cache
 * is what makes the next turn of the same conversation cheap), and the token meter diff
 * that counts output only holds when nothing else runs on that sequence.
 */
class Turns {
  private busy = false;
  private readonly waiting: Array<() => void> = [];

  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw abortedError(signal.reason);
    if (this.busy) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => {
          const index = this.waiting.indexOf(wake);
          if (index >= 0) this.waiting.splice(index, 1);
          reject(abortedError(signal?.reason));
        };
        const wake = (): void => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        this.waiting.push(wake);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    } else {
      this.busy = true;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // Hand the turn straight to the next waiter, so no newcomer can slip in between.
      if (next) next();
      else this.busy = false;
    };
  }
}

/** Bridges node-llama-cpp's callbacks to an async iterator, in order, errors last. */
class EventQueue<T> {
  private readonly items: T[] = [];
  private wake?: () => void;
  private ended = false;
  private failure?: { error: unknown };

  push(item: T): void {
    this.items.push(item);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  fail(error: unknown): void {
    this.failure = { error };
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *drain(): AsyncGenerator<T> {
    for (;;) {
      if (this.items.length > 0) {
        yield this.items.shift()!;
        continue;
      }
      if (this.failure) throw this.failure.error;
      if (this.ended) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}

function stopReasonOf(reason: string): StopReason {
  if (reason === 'maxTokens') return 'length';
  if (reason === 'abort') return 'aborted';
  if (reason === 'functionCalls') return 'toolUse';
  return 'stop';
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class LlamaCppRuntime {
  private backend?: Promise<{ lib: LlamaModule; llama: Llama }>;
  private readonly models = new Map<string, Promise<LoadedModel>>();
  /** Models loaded for one request (`once`), freed when it ends, or by dispose() if it comes first. */
  private readonly oneOffs = new Set<Promise<LoadedModel>>();
  /** Bumped by dispose(), so a load that finishes afterwards knows it is stale. */
  private generation = 0;
  /**
   * llama.cpp's first error line since a load began: for a file it cannot read, node-llama-cpp
   * itself only says "Failed to load model", and the reason is in this log line.
   */
  private loadError?: string;

  constructor(
    private readonly options: RuntimeOptions,
    private readonly importBackend: () => Promise<LlamaModule>,
  ) {}

  /** Whether the llama.cpp backend has been asked for yet (for status and tests). */
  get backendRequested(): boolean {
    return this.backend !== undefined;
  }

  private getBackend(): Promise<{ lib: LlamaModule; llama: Llama }> {
    this.backend ??= (async () => {
      const lib = await this.importBackend();
      const logger = this.options.logger;
      const loadError = (line: string): void => {
        this.loadError ??= line;
      };
      const llama = await lib.getLlama({
        gpu: this.options.gpu,
        // Compiling llama.cpp needs a toolchain and a download and takes minutes: not
        // something to start inside a chat request. Without a usable prebuilt binary the
        // request fails at once with node-llama-cpp's explanation instead.
        build: 'never',
        progressLogs: false,
        logLevel: lib.LlamaLogLevel.warn,
        logger(level, text) {
          const line = text.trimEnd();
          if (line === '') return;
          if (level === lib.LlamaLogLevel.error || level === lib.LlamaLogLevel.fatal) {
            loadError(line);
            logger.error(line);
          } else if (level === lib.LlamaLogLevel.warn) logger.warn(line);
          else logger.debug(line);
        },
      });
      return { lib, llama };
    })();
    this.backend.catch(() => {
      // A failed start is not cached: a later request may find the problem fixed.
      this.backend = undefined;
    });
    return this.backend;
  }

  /** The model for `modelPath`, loaded once and kept for every later request. */
  private load(modelPath: string): Promise<LoadedModel> {
    let loading = this.models.get(modelPath);
    if (!loading) {
      loading = this.open(modelPath);
      this.models.set(modelPath, loading);
      loading.catch(() => {
        if (this.models.get(modelPath) === loading) this.models.delete(modelPath);
      });
    }
    return loading;
  }

  private open(modelPath: string): Promise<LoadedModel> {
    const generation = this.generation;
    return (async () => {
      const { lib, llama } = await this.getBackend().catch((error: unknown) => {
        throw new ModelError('unknown', `${PROVIDER_ID}: could not start llama.cpp: ${describe(error)}`, {
          provider: PROVIDER_ID,
          cause: error,
        });
      });
      const started = performance.now();
      let model: LlamaModel;
      this.loadError = undefined;
      try {
        model = await llama.loadModel({ modelPath });
      } catch (error) {
        if (generation !== this.generation) throw stopped(error);
        // llama.cpp's log line and the failed load reach this thread in the same event-loop
        // pass, in either order: one turn later the line has arrived if there was one.
        await new Promise((resolve) => setImmediate(resolve));
        // Set by the log callback during the load, which TypeScript's narrowing cannot see.
        const logged = this.loadError as string | undefined;
        const detail = logged ? ` (${logged.replace(/^[\w:]+: /, '')})` : '';
        // Retrying a file llama.cpp cannot read will not help, so this is not "unknown".
        throw new ModelError(
          'invalid_request',
          `${PROVIDER_ID}: could not load ${modelPath} as a GGUF model: ${describe(error)}${detail}`,
          { provider: PROVIDER_ID, cause: error },
        );
      }
      const threads = this.options.threads ?? Math.max(1, llama.cpuMathCores);
      let context: LlamaContext;
      try {
        context = await model.createContext({ contextSize: this.options.contextSize, threads, sequences: 1 });
      } catch (error) {
        await model.dispose().catch(() => {});
        if (generation !== this.generation) throw stopped(error);
        throw new ModelError(
          'unknown',
          `${PROVIDER_ID}: could not create a ${this.options.contextSize}-token context: ${describe(error)}`,
          {
            provider: PROVIDER_ID,
            cause: error,
          },
        );
      }
      const sequence = context.getSequence();
      const chat = new lib.LlamaChat({ contextSequence: sequence, chatWrapper: chooseChatWrapper(lib, model) });
      if (generation !== this.generation) {
        await model.dispose().catch(() => {});
        throw stopped();
      }
      this.options.logger.info(`loaded ${modelPath} in ${Math.round(performance.now() - started)} ms`, {
        contextSize: context.contextSize,
        threads,
        chatWrapper: chat.chatWrapper.wrapperName,
      });
      return { model, context, sequence, chat, turns: new Turns() };
    })();
  }

  /**
   * Streams one completion. An abort (the caller's signal) ends the stream by throwing
   * ModelError("aborted"), the same way the SDK's HTTP helpers report it, so the loop
   * treats a local model like any other provider; text already streamed stays streamed.
   */
  async *generate({ modelPath, request, maxTokens, signal, once }: GenerateOptions): AsyncGenerator<ModelStreamEvent> {
    if (signal?.aborted) throw abortedError(signal.reason);
    if (once && !this.models.has(modelPath)) {
      yield* this.generateOnce({ modelPath, request, maxTokens, signal });
      return;
    }
    // Loading is shared by every request for this file, so an abort leaves it running for
    // the next request and only stops waiting for it.
    const loaded = await raceAbort(this.load(modelPath), signal);
    yield* this.answer(loaded, request, maxTokens, signal);
  }

  /**
   * A model loaded for this request alone: freed when the answer ends, and the backend too
   * when nothing else is loaded.
   */
  private async *generateOnce({
    modelPath,
    request,
    maxTokens,
    signal,
  }: GenerateOptions): AsyncGenerator<ModelStreamEvent> {
    const loading = this.open(modelPath);
    this.oneOffs.add(loading);
    const free = async (): Promise<void> => {
      const loaded = await loading.catch(() => undefined);
      // dispose() took it over when it is no longer in the set.
      if (!this.oneOffs.delete(loading)) return;
      if (loaded && !loaded.model.disposed) await loaded.model.dispose();
      if (this.models.size === 0 && this.oneOffs.size === 0) await this.releaseBackend();
    };
    try {
      const loaded = await raceAbort(loading, signal);
      yield* this.answer(loaded, request, maxTokens, signal);
    } finally {
      // An abort while loading leaves the load running: free it once it is done.
      if (signal?.aborted) void free().catch(() => {});
      else await free();
    }
  }

  /** Frees the llama.cpp backend no request uses; the next request starts it again. */
  private async releaseBackend(): Promise<void> {
    const backend = this.backend;
    this.backend = undefined;
    const started = await backend?.catch(() => undefined);
    if (started && !started.llama.disposed) await started.llama.dispose();
  }

  private async *answer(
    loaded: LoadedModel,
    request: ModelRequest,
    maxTokens: number,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<ModelStreamEvent> {
    const release = await loaded.turns.acquire(signal);
    try {
      const { model, chat, sequence } = loaded;
      const history = toChatHistory(request.systemPrompt, request.messages);

      // What the wrapper will feed the model, counted the way it will be evaluated.
      const rendered: ChatHistoryItem[] =
        history[history.length - 1]?.type === 'model' ? history : [...history, { type: 'model', response: [] }];
      const input = chat.chatWrapper
        .generateContextState({ chatHistory: rendered })
        .contextText.tokenize(model.tokenizer).length;
      const room = sequence.contextSize - input;
      if (room < 1) {
        throw new ModelError(
          'context_overflow',
          `${PROVIDER_ID}: prompt is ${input} tokens, context window is ${sequence.contextSize}`,
          {
            provider: PROVIDER_ID,
          },
        );
      }

      const controller = new AbortController();
      const forwardAbort = (): void => controller.abort(signal?.reason);
      signal?.addEventListener('abort', forwardAbort, { once: true });
      if (signal?.aborted) forwardAbort();
      const events = new EventQueue<ModelStreamEvent>();
      const meterBefore = sequence.tokenMeter.getState();
      let streamedTokens = 0;

      const run = chat
        .generateResponse(history, {
          signal: controller.signal,
          // Near the end of the window, generate what fits rather than let node-llama-cpp
          // shift the context and silently drop the start of the conversation.
          maxTokens: Math.min(maxTokens, room),
          // Unset means node-llama-cpp's default, greedy decoding: reproducible replies.
          temperature: request.temperature,
          onToken(tokens) {
            streamedTokens += tokens.length;
          },
          onTextChunk(text) {
            if (text !== '') events.push({ type: 'text_delta', delta: text });
          },
        })
        .then(
          (response) => {
            const generated = sequence.tokenMeter.diff(meterBefore).usedOutputTokens;
            events.push({
              type: 'done',
              stopReason: stopReasonOf(response.metadata.stopReason),
              // The meter also counts tokens held back as a possible stop sequence.
              usage: { input, output: Math.max(generated, streamedTokens) },
            });
            events.end();
          },
          (error: unknown) => {
            if (signal?.aborted || controller.signal.aborted) events.fail(abortedError(error));
            else if (model.disposed) events.fail(stopped(error));
            else
              events.fail(
                new ModelError('unknown', `${PROVIDER_ID}: generation failed: ${describe(error)}`, {
                  provider: PROVIDER_ID,
                  cause: error,
                }),
              );
          },
        );

      try {
        yield* events.drain();
      } finally {
        signal?.removeEventListener('abort', forwardAbort);
        // Also reached when the consumer stops iterating early: stop the model and let the
        // sequence settle before the next request may use it.
        controller.abort();
        await run;
      }
    } finally {
      release();
    }
  }

  /** Frees every model and the llama.cpp backend; a later request loads them again. */
  async dispose(): Promise<void> {
    this.generation++;
    const backend = this.backend;
    const models = [...this.models.values(), ...this.oneOffs];
    this.backend = undefined;
    this.models.clear();
    this.oneOffs.clear();
    for (const loading of models) {
      const loaded = await loading.catch(() => undefined);
      if (loaded && !loaded.model.disposed) await loaded.model.dispose();
    }
    const started = await backend?.catch(() => undefined);
    if (started) await started.llama.dispose();
  }
}

/**
 * A model that ships a chat template gets the wrapper node-llama-cpp resolves from it. A
 * model without one (a base model, or a bare test model) gets the plain transcript format
 * of GeneralChatWrapper: node-llama-cpp's own fallback guesses Llama 2's [INST] format
 * from a "<s>" BOS string alone, which a base model has no more reason to follow.
 */
function chooseChatWrapper(lib: LlamaModule, model: LlamaModel): ChatWrapper {
  const template = model.fileInfo.metadata.tokenizer?.chat_template;
  if (typeof template === 'string' && template.trim() !== '') return lib.resolveChatWrapper(model);
  return new lib.GeneralChatWrapper();
}
