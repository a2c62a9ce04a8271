/**
 * Any provider id through a real gateway: `models.providers.<id>` entries with OpenClaw's
 * `api` names (an OpenClaw-shaped Ollama entry, a vLLM one, a Responses and an
 * Anthropic-Messages endpoint) side by side on two fake servers on 127.0.0.1; failover
 * between them; an explicit model tried while it cools down; a 429 retried in a live run;
 * and GET /v1/models.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentEvents, runAgent, startAgent, type AgentHarness } from './agent-helpers.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';

const TOKEN = 'gateway-secret-token';
let h: AgentHarness;
let ollama: FakeLlm;
let vllm: FakeLlm;

beforeAll(async () => {
  ollama = await startFakeLlm({ apiKeys: ['ollama-local'] });
  vllm = await startFakeLlm({ apiKeys: ['vllm-key'] });
  h = await startAgent({
    gateway: { auth: { mode: 'token', token: TOKEN }, http: { endpoints: { chatCompletions: { enabled: true } } } },
    config: {
      agents: { defaults: { model: { primary: 'ollama/llama3.2', fallbacks: ['vllm/qwen3'] } } },
      models: {
        mode: 'merge',
        providers: {
          // As OpenClaw's docs write an Ollama entry, extra model fields included.
          ollama: {
            baseUrl: ollama.openaiBaseUrl,
            apiKey: 'ollama-local',
            api: 'openai-completions',
            timeoutSeconds: 300,
            models: [
              {
                id: 'llama3.2',
                name: 'Llama 3.2',
                reasoning: false,
                input: ['text'],
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
                contextWindow: 131072,
                maxTokens: 8192,
              },
            ],
          },
          vllm: {
            baseUrl: vllm.openaiBaseUrl,
            apiKey: 'vllm-key',
            api: 'openai-completions',
            models: [{ id: 'qwen3' }],
          },
          lmstudio: {
            baseUrl: ollama.openaiBaseUrl,
            apiKey: 'ollama-local',
            api: 'openai-responses',
            models: [{ id: 'local-model' }],
          },
          'claude-proxy': {
            baseUrl: vllm.anthropicBaseUrl,
            apiKey: 'vllm-key',
            api: 'anthropic-messages',
            models: [{ id: 'claude-sonnet-4-5' }],
          },
        },
      },
    },
  });
});
afterAll(async () => {
  await h?.stop();
  await ollama?.close();
  await vllm?.close();
});

function reset() {
  ollama.reset();
  vllm.reset();
}

describe('models.providers.<id> with any id', () => {
  it('an OpenClaw config with models.providers.ollama answers through the openai plugin, with that endpoint and key', async () => {
    reset();
    ollama.script({ text: 'hello from llama' });
    const { final } = await runAgent(h.client, { message: 'hi' });
    expect(final).toMatchObject({
      status: 'ok',
      summary: 'hello from llama',
      result: { provider: 'ollama', model: 'llama3.2' },
    });
    expect(ollama.requests).toHaveLength(1);
    expect(ollama.requests[0]).toMatchObject({
      api: 'openai-chat',
      apiKey: 'ollama-local',
      body: { model: 'llama3.2', max_tokens: 8192 },
    });
    expect(vllm.requests).toHaveLength(0);
  });

  it('several providers of the same API side by side, and the other two APIs under ids of their own', async () => {
    reset();
    vllm.script({ text: 'qwen here' }, { text: 'claude via proxy' });
    ollama.script({ text: 'lmstudio responses' });
    const a = await runAgent(h.client, { message: 'one', model: 'vllm/qwen3', sessionKey: 'agent:main:side-a' });
    const b = await runAgent(h.client, {
      message: 'two',
      model: 'claude-proxy/claude-sonnet-4-5',
      sessionKey: 'agent:main:side-b',
    });
    const c = await runAgent(h.client, {
      message: 'three',
      model: 'lmstudio/local-model',
      sessionKey: 'agent:main:side-c',
    });
    expect([a.final.summary, b.final.summary, c.final.summary]).toEqual([
      'qwen here',
      'claude via proxy',
      'lmstudio responses',
    ]);
    expect([a.final.result.provider, b.final.result.provider, c.final.result.provider]).toEqual([
      'vllm',
      'claude-proxy',
      'lmstudio',
    ]);
    expect(vllm.requests.map((request) => [request.api, request.apiKey, request.body.model])).toEqual([
      ['openai-chat', 'vllm-key', 'qwen3'],
      ['anthropic', 'vllm-key', 'claude-sonnet-4-5'],
    ]);
    expect(ollama.requests.map((request) => [request.api, request.body.model])).toEqual([
      ['openai-responses', 'local-model'],
    ]);
  });

  it('fails over between custom providers, names the failing id, and tries an explicit model while it cools down', async () => {
    reset();
    ollama.script({
      error: { status: 401, message: 'invalid key', type: 'invalid_request_error', code: 'invalid_api_key' },
    });
    vllm.script({ text: 'fallback qwen' }, { text: 'qwen again' });
    const first = await runAgent(h.client, { message: 'who answers?', sessionKey: 'agent:main:failover' });
    expect(first.final).toMatchObject({ status: 'ok', summary: 'fallback qwen', result: { provider: 'vllm' } });
    const resets = agentEvents(h.events, first.ack.runId).filter(
      (event) => event.stream === 'assistant' && event.data.reset,
    );
    // The failed attempt's reset, then the one that names the next model.
    expect(resets.map((event) => event.data.reason)).toEqual([
      expect.stringMatching(/^ollama 401: invalid key/),
      expect.stringMatching(/^ollama 401: invalid key/),
    ]);
    expect(resets[1]!.data.failover).toEqual({ from: 'ollama/llama3.2', to: 'vllm/qwen3', cause: '401' });
    // The auth failure benches the ollama key: the next run goes straight to vLLM …
    const second = await runAgent(h.client, { message: 'again', sessionKey: 'agent:main:failover' });
    expect(second.final.result.provider).toBe('vllm');
    expect(ollama.requests).toHaveLength(1);
    // … but the user asking for it by name (claw agent --model ollama/llama3.2) still gets it tried.
    ollama.script({ text: 'llama is back' });
    const third = await runAgent(h.client, {
      message: 'use llama',
      model: 'ollama/llama3.2',
      sessionKey: 'agent:main:failover',
    });
    expect(third.final).toMatchObject({ status: 'ok', summary: 'llama is back', result: { provider: 'ollama' } });
  });

  it('a 429 in a live run is retried after its Retry-After, with a retry status on the stream', async () => {
    reset();
    vllm.script(
      { error: { status: 429, message: 'slow down', type: 'rate_limit_error', retryAfterSeconds: 1 } },
      { text: 'after the wait' },
    );
    const started = Date.now();
    const { ack, final } = await runAgent(h.client, {
      message: 'busy?',
      model: 'vllm/qwen3',
      sessionKey: 'agent:main:retry',
    });
    expect(final).toMatchObject({ status: 'ok', summary: 'after the wait' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(vllm.requests).toHaveLength(2);
    const retry = agentEvents(h.events, ack.runId).find((event) => event.stream === 'assistant' && event.data.retry);
    expect(retry?.data).toMatchObject({
      reset: true,
      reason: expect.stringMatching(/^vllm 429/),
      // The configured chain follows the chosen model, so one retry is the budget before it.
      retry: { attempt: 2, of: 2, waitMs: expect.any(Number) },
    });
    expect(retry!.data.retry.waitMs).toBeGreaterThanOrEqual(1000);
  });

  it('models.list and the catalog show the configured providers’ models', async () => {
    const listed: any = await h.client.request('models.list', {});
    expect(listed.default).toBe('ollama/llama3.2');
    expect(listed.fallbacks).toEqual(['vllm/qwen3']);
    const refs = listed.models.map((model: { ref: string }) => model.ref);
    expect(refs).toEqual(
      expect.arrayContaining([
        'ollama/llama3.2',
        'vllm/qwen3',
        'lmstudio/local-model',
        'claude-proxy/claude-sonnet-4-5',
      ]),
    );
    expect(listed.models.find((model: { ref: string }) => model.ref === 'ollama/llama3.2')).toMatchObject({
      provider: 'ollama',
      contextWindow: 131072,
    });
  });
});

describe('GET /v1/models', () => {
  const get = (path: string, token = TOKEN) =>
    fetch(`http://127.0.0.1:${h.gw.port}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('lists the agent targets and the configured models in OpenAI’s shape, behind gateway auth', async () => {
    expect((await get('/v1/models', '')).status).toBe(401);
    expect((await get('/v1/models', 'wrong')).status).toBe(401);
    const response = await get('/v1/models');
    expect(response.status).toBe(200);
    const body: any = await response.json();
    expect(body.object).toBe('list');
    const ids = body.data.map((model: { id: string }) => model.id);
    expect(ids.slice(0, 3)).toEqual(['openclaw', 'openclaw/default', 'openclaw/main']);
    expect(ids).toEqual(
      expect.arrayContaining([
        'ollama/llama3.2',
        'vllm/qwen3',
        'lmstudio/local-model',
        'claude-proxy/claude-sonnet-4-5',
      ]),
    );
    expect(new Set(ids).size).toBe(ids.length);
    for (const model of body.data)
      expect(model).toEqual({
        id: expect.any(String),
        object: 'model',
        created: expect.any(Number),
        owned_by: expect.any(String),
      });
    expect(body.data.find((model: { id: string }) => model.id === 'vllm/qwen3').owned_by).toBe('vllm');
  });

  it('GET /v1/models/{id} finds one model (encoded or not) and 404s an unknown one', async () => {
    expect(await (await get('/v1/models/openclaw%2Fdefault')).json()).toMatchObject({
      id: 'openclaw/default',
      object: 'model',
      owned_by: 'openclaw',
    });
    expect(await (await get('/v1/models/ollama/llama3.2')).json()).toMatchObject({
      id: 'ollama/llama3.2',
      owned_by: 'ollama',
    });
    const missing = await get('/v1/models/nope%2Fnothing');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({
      error: { code: 'model_not_found', message: expect.stringContaining('nope/nothing') },
    });
    expect((await get('/v1/models/ollama%2Fllama3.2', '')).status).toBe(401);
  });

  it('a listed backend model sent as `model` to /v1/chat/completions is the one that answers', async () => {
    reset();
    vllm.script({ text: 'picked from the list' });
    const response = await fetch(`http://127.0.0.1:${h.gw.port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vllm/qwen3', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).choices[0].message.content).toBe('picked from the list');
    expect(vllm.requests.map((request) => request.body.model)).toEqual(['qwen3']);
    expect(ollama.requests).toHaveLength(0);
  });
});
