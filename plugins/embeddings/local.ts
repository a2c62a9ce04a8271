/**
 * Local embeddings: a GGUF model run on the CPU by node-llama-cpp. The package (and its
 * native addon) is imported on the first embed (and installed into the state dir first when
 * claw was installed without it, by the "runtime-deps" service), never when this module loads, so memory
 * search that never embeds locally never pays for it. Once loaded, the model stays loaded
 * for later calls until close(). The type import below is erased at compile time.
 */
import { basename } from 'node:path';
import type { Llama, LlamaEmbeddingContext, LlamaModel } from 'node-llama-cpp';
import { ModelError, NODE_LLAMA_CPP, type RuntimeDeps } from '../../sdk/index.js';
import { type EmbeddingLogger, type EmbeddingProvider } from '../../sdk/memory/index.js';
import { sanitizeAndNormalizeEmbedding } from './normalize.js';

type LlamaModule = typeof import('node-llama-cpp');

export interface LocalEmbeddingOptions {
  /** Absolute path of the GGUF file. */
  modelPath: string;
  /** Longest wait for loading the model, and for each text. */
  timeoutMs: number;
  /** Evaluation threads; unset means half the math cores the machine reports. */
  threads?: number;
  logger?: EmbeddingLogger;
  /** How node-llama-cpp is imported (tests count or replace it). */
  importBackend?: () => Promise<LlamaModule>;
  /** The host's "runtime-deps" service: imports node-llama-cpp, installing it on first use when claw lacks it. */
  runtimeDeps?: RuntimeDeps;
}

interface Loaded {
  llama: Llama;
  model: LlamaModel;
  context: LlamaEmbeddingContext;
  contextSize: number;
}

const PROVIDER = 'local';

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Largest context the embedding context asks for. The model's whole training window can
 * mean GB of KV cache for a chat model used as an embedder; memory chunks are a few hundred
 * tokens, and longer texts are truncated to fit.
 */
const MAX_CONTEXT = 2048;

export class LocalEmbeddingProvider implements EmbeddingProvider {
  readonly id = PROVIDER;
  readonly model: string;
  readonly fingerprint: string;
  dims?: number;
  private loading?: Promise<Loaded>;
  /** Bumped by close(), so work that finishes afterwards knows it is stale. */
  private generation = 0;
  private readonly label: string;

  constructor(private readonly options: LocalEmbeddingOptions) {
    this.model = basename(options.modelPath).replace(/\.gguf$/i, '');
    this.fingerprint = `local:${this.model}:${options.modelPath}`;
    this.label = `local embeddings (${options.modelPath})`;
  }

  /** Whether node-llama-cpp has been asked for (for status and tests). */
  get backendRequested(): boolean {
    return this.loading !== undefined;
  }

  private importDefault(): Promise<LlamaModule> {
    const { runtimeDeps } = this.options;
    if (!runtimeDeps)
      return Promise.reject(
        new Error('node-llama-cpp comes through the host\'s "runtime-deps" service, and none was given'),
      );
    return runtimeDeps.import<LlamaModule>(NODE_LLAMA_CPP, {
      retryCommand: 'claw plugins enable llama-cpp (or set memorySearch.provider to a remote one)',
    });
  }

  private error(kind: ModelError['kind'], message: string, cause?: unknown): ModelError {
    return new ModelError(kind, `${this.label}: ${message}`, { provider: PROVIDER, cause });
  }

  /**
   * Waits for `work` at most `timeoutMs`, and no longer than `signal` allows. The work itself
   * cannot be interrupted in llama.cpp; it finishes in the background.
   */
  private wait<T>(work: Promise<T>, what: string, signal: AbortSignal | undefined): Promise<T> {
    if (signal?.aborted) return Promise.reject(this.error('aborted', 'aborted', signal.reason));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(this.error('timeout', `${what} took longer than ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      const onAbort = (): void => {
        cleanup();
        reject(this.error('aborted', 'aborted', signal?.reason));
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      work.then(
        (value) => {
          cleanup();
          resolve(value);
        },
        (error: unknown) => {
          cleanup();
          reject(error);
        },
      );
    });
  }

  private load(): Promise<Loaded> {
    if (this.loading) return this.loading;
    const generation = this.generation;
    const { logger, modelPath } = this.options;
    const loading = (async (): Promise<Loaded> => {
      const started = performance.now();
      let lib: LlamaModule;
      let llama: Llama;
      try {
        lib = await (this.options.importBackend ?? (() => this.importDefault()))();
        llama = await lib.getLlama({
          gpu: false,
          // Compiling llama.cpp takes a toolchain, a download and minutes: not something to
          // start in the middle of indexing. Without a prebuilt binary this fails at once.
          build: 'never',
          progressLogs: false,
          logLevel: lib.LlamaLogLevel.warn,
          logger(level, text) {
            const line = text.trimEnd();
            if (
              line !== '' &&
              (level === lib.LlamaLogLevel.warn ||
                level === lib.LlamaLogLevel.error ||
                level === lib.LlamaLogLevel.fatal)
            ) {
              logger?.warn(`llama.cpp: ${line}`);
            }
          },
        });
      } catch (error) {
        throw this.error('unknown', `could not start llama.cpp (node-llama-cpp): ${describe(error)}`, error);
      }
      let model: LlamaModel;
      try {
        model = await llama.loadModel({ modelPath });
      } catch (error) {
        await llama.dispose().catch(() => {});
        // Retrying a file llama.cpp cannot read will not help.
        throw this.error('invalid_request', `could not load the model: ${describe(error)}`, error);
      }
      // Embedding is background work next to the chat: leave it half the cores.
      const threads = this.options.threads ?? Math.max(1, Math.floor(llama.cpuMathCores / 2));
      // A fixed size (not "auto") so embed() knows exactly how much of a long text fits.
      const contextSize = Math.min(MAX_CONTEXT, model.trainContextSize || MAX_CONTEXT);
      let context: LlamaEmbeddingContext;
      try {
        context = await model.createEmbeddingContext({ threads, contextSize });
      } catch (error) {
        await model.dispose().catch(() => {});
        await llama.dispose().catch(() => {});
        throw this.error('unknown', `could not create an embedding context: ${describe(error)}`, error);
      }
      if (generation !== this.generation) {
        await context.dispose().catch(() => {});
        await model.dispose().catch(() => {});
        await llama.dispose().catch(() => {});
        throw this.error('aborted', 'provider closed while the model was loading');
      }
      this.dims = model.embeddingVectorSize;
      logger?.info?.(
        `memory embeddings: loaded ${modelPath} (${this.dims} dims, ${threads} threads) in ${Math.round(performance.now() - started)} ms`,
      );
      return { llama, model, context, contextSize };
    })();
    this.loading = loading;
    // A failed load is not kept: a later call may find the problem fixed.
    loading.catch(() => {
      if (this.loading === loading) this.loading = undefined;
    });
    return loading;
  }

  async embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    const { signal } = options;
    if (signal?.aborted) throw this.error('aborted', 'aborted', signal.reason);
    if (texts.length === 0) return [];
    // Shared by every call, so an abort or timeout stops waiting for the load, not the load.
    const { model, context, contextSize } = await this.wait(this.load(), 'loading the model', signal);
    const out: number[][] = [];
    for (const text of texts) {
      if (signal?.aborted) throw this.error('aborted', 'aborted', signal.reason);
      let tokens = model.tokenize(text);
      // node-llama-cpp refuses input that does not fit the context (BOS/EOS included, with
      // one token to spare); truncating keeps the start, which is what a chunk is mostly about.
      const limit = contextSize - (context.calculateInputLength(tokens) - tokens.length) - 1;
      if (tokens.length > limit) tokens = tokens.slice(0, Math.max(1, limit));
      let vector: readonly number[];
      try {
        vector = (await this.wait(context.getEmbeddingFor(tokens), 'embedding one text', signal)).vector;
      } catch (error) {
        if (error instanceof ModelError) throw error;
        if (context.disposed) throw this.error('aborted', 'provider closed during the call', error);
        throw this.error('unknown', `embedding failed: ${describe(error)}`, error);
      }
      // Text that tokenizes to nothing gets no vector from llama.cpp: a zero vector matches nothing.
      out.push(
        vector.length === 0
          ? new Array<number>(model.embeddingVectorSize).fill(0)
          : sanitizeAndNormalizeEmbedding(vector),
      );
    }
    return out;
  }

  /** Frees the context, the model and llama.cpp; a later embed loads them again. */
  async close(): Promise<void> {
    this.generation++;
    const loading = this.loading;
    this.loading = undefined;
    const loaded = await loading?.catch(() => undefined);
    if (!loaded) return;
    await loaded.context.dispose();
    await loaded.model.dispose();
    await loaded.llama.dispose();
  }
}
