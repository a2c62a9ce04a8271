import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Llama, LlamaModel } from 'node-llama-cpp';
import { writeTinyLlamaGguf } from './fixtures/gguf.js';

// Loading llama.cpp and the model is well under a second here; the margin is for a busy CI.
const SLOW = 60_000;

describe('writeTinyLlamaGguf', () => {
  let dir: string;
  let file: string;
  let llama: Llama | undefined;
  let model: LlamaModel;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'claw-gguf-'));
    file = writeTinyLlamaGguf(join(dir, 'tiny.gguf'), { seed: 7 });
    const { getLlama } = await import('node-llama-cpp');
    llama = await getLlama({ gpu: false, build: 'never', progressLogs: false });
    model = await llama.loadModel({ modelPath: file });
  }, SLOW);

  afterAll(async () => {
    await llama?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes a small GGUF v3 file, the same bytes for the same seed', () => {
    const bytes = readFileSync(file);
    expect(bytes.subarray(0, 4).toString('ascii')).toBe('GGUF');
    expect(bytes.readUInt32LE(4)).toBe(3);
    expect(Number(bytes.readBigUInt64LE(8))).toBe(3 + 2 * 9); // tensors
    expect(statSync(file).size).toBeLessThan(1024 * 1024);

    const again = writeTinyLlamaGguf(join(dir, 'again.gguf'), { seed: 7 });
    const other = writeTinyLlamaGguf(join(dir, 'other.gguf'), { seed: 8 });
    expect(readFileSync(again).equals(bytes)).toBe(true);
    expect(readFileSync(other).equals(bytes)).toBe(false);
  });

  it('reads back with the metadata and tensors llama.cpp expects', async () => {
    const { readGgufFileInfo } = await import('node-llama-cpp');
    const info = await readGgufFileInfo(file);
    expect(info.version).toBe(3);
    const metadata = info.metadata as unknown as {
      general: { architecture: string };
      llama: { embedding_length: number; block_count: number; attention: { head_count: number } };
      tokenizer: { ggml: { model: string; tokens: string[]; bos_token_id: number; eos_token_id: number } };
    };
    expect(metadata.general.architecture).toBe('llama');
    expect(metadata.llama).toMatchObject({ embedding_length: 64, block_count: 2, attention: { head_count: 4 } });
    expect(metadata.tokenizer.ggml.model).toBe('llama');
    const tokens = metadata.tokenizer.ggml.tokens;
    expect(tokens.slice(0, 3)).toEqual(['<unk>', '<s>', '</s>']);
    expect(tokens).toContain('<0x00>');
    expect(tokens).toContain('<0xFF>');
    expect(tokens).toContain('▁hello');
    expect(tokens.length).toBeGreaterThan(256 + 3);
    const names = (info.fullTensorInfo ?? info.tensorInfo ?? []).map((tensor) => tensor.name);
    expect(names).toEqual(expect.arrayContaining(['token_embd.weight', 'output.weight', 'blk.1.ffn_down.weight']));
  });

  it('tokenizes with the SPM vocabulary, word pieces and byte fallback', () => {
    const words = model.tokenize('hello world');
    expect(model.detokenize(words)).toBe('hello world');
    expect(words).toHaveLength(2); // "▁hello" "▁world": every prefix is in the vocabulary
    const unicode = 'é✓';
    expect(model.detokenize(model.tokenize(unicode))).toBe(unicode);
  });

  // Contexts get one thread: node-llama-cpp's default (at least 4) oversubscribes a 2-core
  // machine, and its spinning threads then make each token take ~200 ms; vitest also runs
  // another test file beside this one.
  it(
    'embeds text into 64 dimensions',
    async () => {
      const context = await model.createEmbeddingContext({ threads: 1 });
      try {
        const embedding = await context.getEmbeddingFor('hello world');
        expect(embedding.vector).toHaveLength(64);
        expect(embedding.vector.every((value) => Number.isFinite(value))).toBe(true);
        expect(embedding.vector.some((value) => value !== 0)).toBe(true);
      } finally {
        await context.dispose();
      }
    },
    SLOW,
  );

  it(
    'generates text',
    async () => {
      const { LlamaCompletion } = await import('node-llama-cpp');
      const context = await model.createContext({ contextSize: 256, threads: 1 });
      try {
        const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
        const chunks: string[] = [];
        const result = await completion.generateCompletionWithMeta('hello the world', {
          maxTokens: 8,
          onTextChunk: (text) => chunks.push(text),
        });
        expect(result.metadata.stopReason).toBe('maxTokens');
        expect(result.response.length).toBeGreaterThan(0);
        expect(chunks.join('')).toBe(result.response);
      } finally {
        await context.dispose();
      }
    },
    SLOW,
  );
});
