// Examples of the account, self-service key and audit answers, for the OpenAPI document
// (checked against their schemas by test/plugins/openapi.test.ts).
import type { Static } from '@sinclair/typebox';
import type { CreateApiKeyBodySchema, CreatedApiKeySchema } from './admin.js';
import type {
  AccountDetailSchema, AccountListSchema, AccountStatusSchema, ApiKeyWithLimitsSchema, AuditListSchema, MyAccountSchema,
  SelfApiKeyListSchema, UpdateApiKeyBodySchema,
} from './accounts.js';

const ACCOUNT_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const KEY_ID = '9b2d4f61-3c8e-4a7b-b5d1-0e6f2a9c8d47';
const CREATED = '2025-06-01T09:30:00.000Z';
const NO_LIMITS = { requests_per_minute: null, tokens_per_minute: null, usd_per_day: null, usd_per_month: null };

export const createOwnApiKeyExample: Static<typeof CreateApiKeyBodySchema> = {
  name: 'staging deploys',
  scope: 'use',
  access: { mode: 'whitelist', ladders: ['alice/summarise'] },
  expires_at: '2025-12-31T23:59:59Z',
};

export const createdOwnApiKeyExample: Static<typeof CreatedApiKeySchema> = {
  id: KEY_ID,
  key_prefix: 'ldr_live_Q4mZ8rTb',
  name: 'staging deploys',
  scope: 'use',
  access: { mode: 'whitelist', ladders: ['alice/summarise'] },
  expires_at: '2025-12-31T23:59:59.000Z',
  created_at: CREATED,
  key: 'ldr_live_Q4mZ8rTb_8fJ2kL0pQ7wE3rT6yU1iO9aS5dF4gH2jK7lZ0xC3vB',
};

const { key: _key, ...created } = createdOwnApiKeyExample;
export const ownApiKeyExample: Static<typeof ApiKeyWithLimitsSchema> = { ...created, revoked_at: null, limits: NO_LIMITS };
export const revokedOwnApiKeyExample: Static<typeof ApiKeyWithLimitsSchema> = { ...ownApiKeyExample, revoked_at: '2025-06-02T10:00:00.000Z' };
export const ownApiKeyListExample: Static<typeof SelfApiKeyListSchema> = { object: 'list', data: [ownApiKeyExample] };
export const updateOwnApiKeyExample: Static<typeof UpdateApiKeyBodySchema> = { name: 'staging deploys (2)', expires_at: null };

const thisMonth = { start: '2025-06-01T00:00:00.000Z', requests: 1204, total_tokens: 1_830_000, cost_usd: 4.21 };

export const myAccountExample: Static<typeof MyAccountSchema> = {
  id: ACCOUNT_ID,
  username: 'alice',
  created_at: CREATED,
  limits: { account: { ...NO_LIMITS, usd_per_month: 100 }, key: NO_LIMITS },
  this_month: thisMonth,
  key: { ...created, scope: 'manage', access: { mode: 'unrestricted', ladders: [] }, expires_at: null },
};

const adminAccount = { id: ACCOUNT_ID, username: 'alice', created_at: CREATED, disabled: false, disabled_at: null, key_count: 3 };

export const accountListExample: Static<typeof AccountListSchema> = { object: 'list', data: [adminAccount], has_more: true, next_cursor: 'YWxpY2U' };
export const accountDetailExample: Static<typeof AccountDetailSchema> = { ...adminAccount, limits: { ...NO_LIMITS, usd_per_month: 100 }, this_month: thisMonth };
export const disabledAccountExample: Static<typeof AccountStatusSchema> = { ...adminAccount, disabled: true, disabled_at: '2025-06-03T08:00:00.000Z', runs_cancelled: 2 };
export const enabledAccountExample: Static<typeof AccountStatusSchema> = { ...adminAccount, runs_cancelled: 0 };

export const auditListExample: Static<typeof AuditListSchema> = {
  object: 'list',
  data: [
    {
      id: '42',
      created_at: '2025-06-02T10:00:00.000Z',
      actor: { type: 'api_key', api_key_id: KEY_ID },
      account: { id: ACCOUNT_ID, username: 'alice' },
      action: 'api_key.revoked',
      target_id: '5e1a7c3d-2b9f-4d6e-8a0c-1f3b5d7e9a2c',
      details: { key_prefix: 'ldr_live_Z9xW3vUt' },
    },
  ],
  has_more: false,
  next_cursor: null,
};
