// Examples of the admin routes that `ladder-admin` uses when a server holds the embedded
// database (issue 18); checked against their schemas by test/plugins/openapi.test.ts.
import type { Static } from '@sinclair/typebox';
import type { AdminConnectionSetSchema, AdminInstanceListSchema, AdminInstanceSchema, AdminSetConnectionBodySchema, ReencryptResultSchema } from './admin.js';
import type { ConnectionListSchema } from './providers.js';
import { connectionExample } from './examples.js';

const summary = {
  id: '3f2b8c1e-5d4a-4e6f-9a7b-2c1d0e9f8a6b',
  status: 'completed' as const,
  ladder: 'alice/draft-and-refine@v1',
  model: 'gpt-4o-mini',
  mode: 'async' as const,
  created_at: '2025-06-01T09:30:00.000Z',
  started_at: '2025-06-01T09:30:00.012Z',
  finished_at: '2025-06-01T09:30:04.512Z',
  spend_usd: 0.00042,
  model_calls: 2,
};

export const adminInstanceListExample: Static<typeof AdminInstanceListSchema> = { data: [summary] };

export const adminInstanceExample: Static<typeof AdminInstanceSchema> = {
  ...summary,
  usage: { prompt_tokens: 180, completion_tokens: 240, total_tokens: 420 },
  knobs: { temperature: 0.7 },
  answer: 'Photosynthesis turns light, water and carbon dioxide into sugar and oxygen.',
  error: null,
};

export const connectionListExample: Static<typeof ConnectionListSchema> = { data: [connectionExample] };

export const adminSetConnectionExample: Static<typeof AdminSetConnectionBodySchema> = { api_key: 'sk-proj-...', label: 'Main OpenAI key', priority: 0 };

export const adminConnectionSetExample: Static<typeof AdminConnectionSetSchema> = { ...connectionExample, created: true };

export const reencryptResultExample: Static<typeof ReencryptResultSchema> = { reencrypted: 3, total: 3 };
