// Examples for the OpenAPI document: one per request body and success response, typed by the
// schemas they illustrate and checked against them by test/plugins/openapi.test.ts. The chat
// requests are the ones Swagger UI's "Try it out" sends, so they must run as they are.
import type { Static } from '@sinclair/typebox';
import type { AccountSchema, ApiKeyListSchema, CreateApiKeyBodySchema, CreatedApiKeySchema } from './admin.js';
import type { ChatCompletion, DirectChatRequest } from './chat.js';
import type { LadderChatRequest, LadderMetadata, SaveLadderBody, ValidationResultSchema } from './ladders.js';
import type { Model } from './models.js';
import type { Instance, InstanceList, InstanceStarted, InstanceTrace, RerunBody, StartInstanceBody } from './pipelines.js';
import type { CatalogSchema, ConnectionSchema, CreateConnectionBodySchema, UpdateConnectionBodySchema } from './providers.js';
import type { LimitsBody, UsageReport } from './quotas.js';

const ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const INSTANCE_ID = '3f2b8c1e-5d4a-4e6f-9a7b-2c1d0e9f8a6b';
const CREATED = '2025-06-01T09:30:00.000Z';
const UPDATED = '2025-06-02T14:05:12.000Z';

// ---------------------------------------------------------------- chat

export const chatRequestExample: DirectChatRequest = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Say hello in one short sentence.' },
  ],
  max_completion_tokens: 256,
  temperature: 0.7,
};

const usage = { prompt_tokens: 24, completion_tokens: 9, total_tokens: 33 };

export const chatCompletionExample: ChatCompletion = {
  id: 'ldr-chat-0d6f1c2a-8b3e-4f5a-9c7d-1e2f3a4b5c6d',
  object: 'chat.completion',
  created: 1748770200,
  model: 'gpt-4o-mini',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Hello! Nice to meet you.', refusal: null },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage,
};

export const ladderChatRequestExample: LadderChatRequest = {
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Why is the sky blue? Answer in two sentences.' }],
};

const ladderAnswer = 'Sunlight scatters off air molecules, and blue light scatters most. So the sky looks blue.';
const ladderUsage = { prompt_tokens: 180, completion_tokens: 64, total_tokens: 244 };

export const ladderCompletionExample: ChatCompletion = {
  ...chatCompletionExample,
  id: `ldr-${INSTANCE_ID}`,
  model: 'alice/draft-and-refine',
  choices: [{ index: 0, message: { role: 'assistant', content: ladderAnswer, refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: ladderUsage,
};

// ---------------------------------------------------------------- models and providers

export const modelExample: Model = { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'openai' };

export const modelListExample = {
  object: 'list' as const,
  data: [modelExample, { ...modelExample, id: 'openai/gpt-4o-mini' }],
};

export const catalogExample: Static<typeof CatalogSchema> = {
  data: [
    { id: 'openai', label: 'OpenAI', credentialKind: 'api_key', supportsEndpoint: false },
    { id: 'custom', label: 'Custom OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp, LM Studio)', credentialKind: 'api_key', supportsEndpoint: true },
  ],
};

export const connectionExample: Static<typeof ConnectionSchema> = {
  provider: 'openai',
  label: 'Main OpenAI key',
  priority: 0,
  key_prefix: 'sk-proj-',
  endpoint: null,
  updated_at: UPDATED,
};

export const createConnectionExample: Static<typeof CreateConnectionBodySchema> = {
  provider: 'openai',
  api_key: 'sk-proj-...',
  label: 'Main OpenAI key',
  priority: 0,
};

export const updateConnectionExample: Static<typeof UpdateConnectionBodySchema> = { priority: 20 };

// ---------------------------------------------------------------- ladders

/** The smallest useful ladder, as docs/ladder-language.md opens with it. */
export const ladderConfigExample = {
  name: 'Draft and refine',
  description: 'Writes a first answer, then improves it.',
  exit: 'refine',
  steps: [
    {
      id: 'draft',
      name: 'Draft',
      type: 'normal' as const,
      fields: [{ name: 'Question', type: 'text' as const, from: 'input.context' }],
      systemPrompt: 'Answer the question.',
    },
    {
      id: 'refine',
      name: 'Refine',
      type: 'normal' as const,
      fields: [
        { name: 'Question', type: 'text' as const, from: 'input.context' },
        { name: 'Draft', type: 'ingest' as const, from: { stepId: 'draft' } },
      ],
      systemPrompt: 'Improve the draft. Reply with the improved answer only.',
    },
  ],
};

export const saveLadderExample: SaveLadderBody = {
  config: ladderConfigExample,
  usage_visibility: 'public',
  config_visibility: 'private',
};

export const ladderMetadataExample: LadderMetadata = {
  id: ID,
  author: 'alice',
  slug: 'draft-and-refine',
  name: 'Draft and refine',
  description: 'Writes a first answer, then improves it.',
  version: 1,
  usage_visibility: 'public',
  config_visibility: 'private',
  created_at: CREATED,
  updated_at: CREATED,
  config: ladderConfigExample,
  allowed_targets: { strategy: 'universal' },
};

/** The same ladder saved a second time. */
export const savedAgainExample: LadderMetadata = { ...ladderMetadataExample, version: 2, updated_at: UPDATED };

const { config: _config, allowed_targets: _targets, ...listedLadder } = ladderMetadataExample;
export const ladderListExample = { data: [listedLadder] };

export const validateExample = { config: ladderConfigExample };

export const validationResultExample: Static<typeof ValidationResultSchema> = { valid: true, errors: [], error_count: 0 };

// ---------------------------------------------------------------- pipelines

export const startInstanceExample: StartInstanceBody = {
  author: 'alice',
  template: 'draft-and-refine',
  ...ladderChatRequestExample,
};

export const instanceStartedExample: InstanceStarted = { instanceId: INSTANCE_ID, status: 'pending' };

export const instanceExample: Instance = {
  instanceId: INSTANCE_ID,
  object: 'pipeline.instance',
  status: 'completed',
  mode: 'async',
  author: 'alice',
  template: 'draft-and-refine',
  version: 1,
  model: 'gpt-4o-mini',
  knobs: {},
  created_at: '2025-06-03T10:00:00.000Z',
  started_at: '2025-06-03T10:00:00.250Z',
  finished_at: '2025-06-03T10:00:04.800Z',
  cancel_requested_at: null,
  attempts: 1,
  progress: { model_calls: 2, steps_completed: 2, steps_total: 2 },
  usage: ladderUsage,
  spend_usd: 0.000065,
  rerun_of: null,
  reused_calls: 0,
  reused_spend_usd: 0,
  result: { ...ladderCompletionExample, created: 1748944804 },
  error: null,
};

/** A pending run cancelled before any worker took it. */
export const cancelledInstanceExample: Instance = {
  ...instanceExample,
  status: 'cancelled',
  started_at: null,
  finished_at: '2025-06-03T10:00:01.000Z',
  cancel_requested_at: '2025-06-03T10:00:01.000Z',
  attempts: 0,
  progress: { model_calls: 0, steps_completed: 0, steps_total: 0 },
  usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  spend_usd: 0,
  result: null,
  error: { message: 'The run was cancelled before it finished.', type: 'execution_error', code: 'run_cancelled', status: 499 },
};

/** Only the last step's system prompt changed (version 2): the first step's call is reused. */
export const rerunBodyExample: RerunBody = { version: 2 };

export const rerunInstanceExample: Instance = {
  ...instanceExample,
  instanceId: '7c1e2d4a-5b6f-4a81-9c3d-2e4f6a8b0c1d',
  version: 2,
  rerun_of: INSTANCE_ID,
  reused_calls: 1,
  reused_spend_usd: 0.0000285,
  spend_usd: 0.0000365,
};

const { result: _result, ...listedInstance } = instanceExample;
export const instanceListExample: InstanceList = { object: 'list', data: [listedInstance], has_more: false, next_cursor: null };

export const instanceTraceExample: InstanceTrace = {
  object: 'pipeline.trace',
  instanceId: INSTANCE_ID,
  status: 'completed',
  partial: false,
  steps: [
    {
      pass: 1,
      depth: 0,
      step: 'draft',
      group: null,
      recursion_answer: null,
      nodes: [
        {
          node: 1,
          prompt: 'Answer the question.\n\nQuestion:\nWhy is the sky blue? Answer in two sentences.',
          prompt_chars: 68,
          output: 'Because of Rayleigh scattering: blue light scatters more than red.',
          usage: { prompt_tokens: 70, completion_tokens: 30, total_tokens: 100 },
          cost_usd: 0.0000285,
          provider: 'openai',
          latency_ms: 1840,
          survived: true,
          error: null,
          reused: false,
          saved_usd: 0,
        },
      ],
    },
  ],
};

export const eventStreamExample = [
  'id: 1\nevent: instance.started\ndata: {"at":"2025-06-03T10:00:00.250Z"}\n',
  'id: 2\nevent: step.started\ndata: {"step":"draft","pass":1,"depth":0,"at":"2025-06-03T10:00:00.260Z"}\n',
  '',
].join('\n');

// ---------------------------------------------------------------- usage and admin

export const usageReportExample: UsageReport = {
  object: 'list',
  data: [{ group: '2025-06-03', requests: 42, prompt_tokens: 12000, completion_tokens: 3400, total_tokens: 15400, cost_usd: 0.0038 }],
  start: '2025-06-01T00:00:00.000Z',
  end: '2025-06-03T12:00:00.000Z',
};

export const limitsBodyExample: LimitsBody = { requests_per_minute: 60, tokens_per_minute: 100000, usd_per_day: 5, usd_per_month: 100 };

export const limitsExample = { requests_per_minute: 60, tokens_per_minute: 100000, usd_per_day: 5, usd_per_month: 100 };

export const createAccountExample = { username: 'alice' };

export const accountExample: Static<typeof AccountSchema> = { id: ID, username: 'alice', created_at: CREATED };

export const createApiKeyExample: Static<typeof CreateApiKeyBodySchema> = {
  name: 'CI pipeline',
  access: { mode: 'whitelist', ladders: ['alice/*'] },
};

export const createdApiKeyExample: Static<typeof CreatedApiKeySchema> = {
  id: INSTANCE_ID,
  key_prefix: 'ldr_live_x7Kp2mQa',
  name: 'CI pipeline',
  access: { mode: 'whitelist', ladders: ['alice/*'] },
  created_at: CREATED,
  key: 'ldr_live_x7Kp2mQa_3vN8sZk1qW0rT5yU9iO2pL6aS4dF7gH1jK3lM5nB8cV',
};

export const apiKeyListExample: Static<typeof ApiKeyListSchema> = {
  data: [
    {
      ...createdApiKeyExample,
      revoked_at: null,
      limits: { requests_per_minute: 60, tokens_per_minute: null, usd_per_day: null, usd_per_month: null },
    },
  ].map(({ key: _key, ...rest }) => rest),
};
