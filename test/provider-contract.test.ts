/**
 * The provider contract (sdk/agent/provider-contract) against every bundled provider that
 * speaks HTTP, each on the fake LLM server in the wire format it speaks. llama-cpp runs a
 * model in-process and has no API to fake; test/provider-llama-cpp.test.ts covers it.
 */
import { join } from 'node:path';
import { providerContractSuite, type FakeModelServer } from '../sdk/agent/provider-contract.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { REPO } from './helpers.js';

const KEY = 'sk-contract-7c1e9d';

/** One fake per suite, started by the suite's beforeAll. */
function fakeServer(): FakeModelServer & { readonly llm: FakeLlm } {
  let llm: FakeLlm | undefined;
  const started = () => {
    if (!llm) throw new Error('the fake LLM server is not started');
    return llm;
  };
  return {
    get llm() {
      return started();
    },
    async start() {
      llm = await startFakeLlm({ apiKeys: [KEY] });
    },
    async stop() {
      await llm?.close();
    },
    script: (...steps) => started().script(...steps),
    requests: () => started().requests.map((request) => request.body),
    reset: () => started().reset(),
  };
}

for (const api of ['chat', 'responses'] as const) {
  const server = fakeServer();
  providerContractSuite({
    name: `openai (${api})`,
    plugin: join(REPO, 'plugins', 'openai'),
    provider: 'openai',
    model: 'gpt-4.1',
    endpoint: () => ({ baseUrl: server.llm.openaiBaseUrl, apiKey: KEY, api }),
    server,
  });
}

const anthropic = fakeServer();
providerContractSuite({
  name: 'anthropic (messages)',
  plugin: join(REPO, 'plugins', 'anthropic'),
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  endpoint: () => ({ baseUrl: anthropic.llm.anthropicBaseUrl, apiKey: KEY }),
  server: anthropic,
});
