// Every table of the service. Migrations in migrations/ are generated from this file
// by `npm run db:generate` (drizzle-kit) and applied at start.
import { sql } from 'drizzle-orm';
import {
  bigint,
  index,
  integer,
  jsonb,
  pgTable,
  bigserial,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
/** Money: whole nano-dollars (src/money.ts), exact in a JS number up to about $9M and in SQL sums beyond. */
const nanos = (name: string) => bigint(name, { mode: 'number' });

export const accounts = pgTable('accounts', {
  id: uuid('id').primaryKey().defaultRandom(),
  username: text('username').notNull().unique(),
  createdAt: createdAt(),
  /** Set by the operator: the account's keys answer 401 account_disabled (docs/accounts.md). */
  disabledAt: timestamp('disabled_at', { withTimezone: true, mode: 'date' }),
});

export type LadderAccessMode = 'unrestricted' | 'whitelist' | 'blacklist';

/** `use`: everything the API gives a key; `manage`: also the account's keys, webhooks and settings. */
export type ApiKeyScope = 'use' | 'manage';

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text('name'),
    // The public part of the key (`ldr_live_` and a lookup id): shown in lists, used to find the row.
    keyPrefix: text('key_prefix').notNull(),
    // SHA-256 of the whole key; the key itself is never stored.
    keyHash: text('key_hash').notNull(),
    accessMode: text('access_mode').$type<LadderAccessMode>().notNull().default('unrestricted'),
    accessLadders: jsonb('access_ladders').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    scope: text('scope').$type<ApiKeyScope>().notNull().default('use'),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    /** The key that created this one through /v1/api-keys; null when the operator did. */
    createdByKeyId: uuid('created_by_key_id'),
    createdAt: createdAt(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [uniqueIndex('api_keys_key_prefix_idx').on(t.keyPrefix), index('api_keys_account_idx').on(t.accountId)],
);

export const providerConnections = pgTable(
  'provider_connections',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    label: text('label').notNull().default(''),
    priority: integer('priority').notNull(),
    // AES-256-GCM ciphertext tagged with the id of the key that sealed it (see secret-box.ts).
    apiKeyCiphertext: text('api_key_ciphertext').notNull(),
    keyPrefix: text('key_prefix').notNull(),
    endpoint: text('endpoint'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('provider_connections_account_provider_idx').on(t.accountId, t.provider)],
);

export type Visibility = 'private' | 'unlisted' | 'public';

export const ladders = pgTable(
  'ladders',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    usageVisibility: text('usage_visibility').$type<Visibility>().notNull().default('private'),
    configVisibility: text('config_visibility').$type<Visibility>().notNull().default('private'),
    currentVersion: integer('current_version').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('ladders_account_slug_idx').on(t.accountId, t.slug)],
);

// Every saved config is kept, so a run can always name the exact version it executed.
export const ladderVersions = pgTable(
  'ladder_versions',
  {
    ladderId: uuid('ladder_id')
      .notNull()
      .references(() => ladders.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    config: jsonb('config').$type<unknown>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.ladderId, t.version] })],
);

export type InstanceStatus = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';

// One row per ladder run, synchronous or background. Background workers claim `pending`
// rows (FOR UPDATE SKIP LOCKED) and hold a lease, so many processes can share one database.
// Every claim bumps `fence`; a process writes for the run only while the row still carries
// the fence it claimed with, so a holder that lost its lease can no longer change anything.
export const instances = pgTable(
  'instances',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ladderId: uuid('ladder_id').references(() => ladders.id, { onDelete: 'set null' }),
    ladderVersion: integer('ladder_version').notNull(),
    author: text('author').notNull(),
    slug: text('slug').notNull(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    apiKeyId: uuid('api_key_id').references(() => apiKeys.id, { onDelete: 'set null' }),
    mode: text('mode').$type<'sync' | 'async'>().notNull(),
    model: text('model').notNull(),
    input: text('input').notNull(),
    knobs: jsonb('knobs').$type<Record<string, number>>().notNull(),
    status: text('status').$type<InstanceStatus>().notNull(),
    answer: text('answer'),
    error: jsonb('error').$type<{ status: number; type: string; code: string; message: string }>(),
    usage: jsonb('usage').$type<{ prompt_tokens: number; completion_tokens: number; total_tokens: number }>(),
    /** What the run paid its vendors, in nano-dollars (src/money.ts). */
    spendNanos: nanos('spend_nanos').notNull().default(0),
    modelCalls: integer('model_calls').notNull().default(0),
    trace: jsonb('trace').$type<unknown[]>(),
    createdAt: createdAt(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
    claimedBy: text('claimed_by'),
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true, mode: 'date' }),
    /** How many times a process has started (or resumed) the run. */
    attempts: integer('attempts').notNull().default(0),
    fence: integer('fence').notNull().default(0),
    cancelRequestedAt: timestamp('cancel_requested_at', { withTimezone: true, mode: 'date' }),
    /** The caller's Idempotency-Key for a background start, and a hash of the body it came with. */
    idempotencyKey: text('idempotency_key'),
    requestHash: text('request_hash'),
    stepsTotal: integer('steps_total').notNull().default(0),
    stepsCompleted: integer('steps_completed').notNull().default(0),
    /**
     * The finished instance this one reruns (docs/pipelines.md, "Rerun"), whose calls it may reuse.
     * No foreign key: the source may be deleted by retention first (a key would make every
     * retention delete look for referencing rows), and then there is simply nothing left to reuse.
     */
    rerunOf: uuid('rerun_of'),
    /** The W3C traceparent of the request that queued a background run: its span links there (docs/observability.md). */
    traceParent: text('trace_parent'),
    /**
     * Live event streams following this run now, counted per process that serves them
     * (src/services/instance-events.ts): its writers announce each event only while it is above
     * 0, and its end always. A process that dies leaves its count behind, which costs notices only.
     */
    watchers: integer('watchers').notNull().default(0),
  },
  (t) => [
    index('instances_status_created_idx').on(t.status, t.createdAt),
    index('instances_account_created_idx').on(t.accountId, t.createdAt, t.id),
    index('instances_status_lease_idx').on(t.status, t.leaseExpiresAt),
    index('instances_finished_idx').on(t.finishedAt),
    uniqueIndex('instances_account_idempotency_idx')
      .on(t.accountId, t.idempotencyKey)
      .where(sql`${t.idempotencyKey} is not null`),
  ],
);

// Checkpoints: one row per finished model call of a run, keyed by its place in the run
// (recursion lineage, pass, step, node), so a run resumed elsewhere never pays for it twice.
export const instanceCalls = pgTable(
  'instance_calls',
  {
    instanceId: uuid('instance_id')
      .notNull()
      .references(() => instances.id, { onDelete: 'cascade' }),
    callKey: text('call_key').notNull(),
    output: text('output').notNull(),
    usage: jsonb('usage').$type<{ prompt_tokens: number; completion_tokens: number; total_tokens: number }>().notNull(),
    costNanos: nanos('cost_nanos').notNull(),
    provider: text('provider'),
    latencyMs: integer('latency_ms').notNull(),
    createdAt: createdAt(),
    /** SHA-256 of the call's model and whole prompt: what a rerun matches to reuse it (null before reruns existed). */
    promptHash: text('prompt_hash'),
    /** On a reused call: the source run's call key it reused (each at most once), and the cost that saved. */
    reusedFrom: text('reused_from'),
    savedNanos: nanos('saved_nanos'),
  },
  (t) => [primaryKey({ columns: [t.instanceId, t.callKey] })],
);

// What happened in a run, in order: the source of the live event stream, whichever process
// runs the instance. `seq` counts from 1 per instance.
export const instanceEvents = pgTable(
  'instance_events',
  {
    instanceId: uuid('instance_id')
      .notNull()
      .references(() => instances.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    type: text('type').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.instanceId, t.seq] })],
);

// ---- Quotas and the usage ledger (branch `quotas`, issue 10; docs/quotas.md) ----------------

export type QuotaScope = 'account' | 'api_key';

// Limits set by the operator, one row per account or API key; a null column is unlimited.
export const quotaLimits = pgTable(
  'quota_limits',
  {
    scope: text('scope').$type<QuotaScope>().notNull(),
    /** accounts.id or api_keys.id, as `scope` says. */
    subjectId: uuid('subject_id').notNull(),
    requestsPerMinute: integer('requests_per_minute'),
    tokensPerMinute: integer('tokens_per_minute'),
    nanosPerDay: nanos('nanos_per_day'),
    nanosPerMonth: nanos('nanos_per_month'),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.subjectId] })],
);

export type QuotaMetric = 'requests' | 'tokens' | 'usd_day' | 'usd_month';

// One counter per subject, metric and UTC window, shared by every process. For requests and
// tokens, `amount` is what has been handed out to processes as shares (never above the limit)
// and `last_grant` the size of the latest share; for spend, `amount` is the nanos recorded by
// ledger batches so far.
export const quotaWindows = pgTable(
  'quota_windows',
  {
    scope: text('scope').$type<QuotaScope>().notNull(),
    subjectId: uuid('subject_id').notNull(),
    metric: text('metric').$type<QuotaMetric>().notNull(),
    windowStart: timestamp('window_start', { withTimezone: true, mode: 'date' }).notNull(),
    /** Whole requests, tokens or nano-dollars. */
    amount: nanos('amount').notNull().default(0),
    lastGrant: nanos('last_grant').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.scope, t.subjectId, t.metric, t.windowStart] }), index('quota_windows_start_idx').on(t.windowStart)],
);

// The usage ledger: one row per model call, direct or made by a ladder run, written in batches.
export const usageRecords = pgTable(
  'usage_records',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    accountId: uuid('account_id').notNull(),
    apiKeyId: uuid('api_key_id'),
    provider: text('provider'),
    model: text('model').notNull(),
    /** `author/slug` for a ladder's calls, null for direct calls. */
    ladder: text('ladder'),
    instanceId: uuid('instance_id'),
    promptTokens: integer('prompt_tokens').notNull(),
    completionTokens: integer('completion_tokens').notNull(),
    totalTokens: integer('total_tokens').notNull(),
    costNanos: nanos('cost_nanos').notNull(),
    /** `ok`, or the error code the call ended with. */
    outcome: text('outcome').notNull(),
  },
  (t) => [
    index('usage_records_account_created_idx').on(t.accountId, t.createdAt),
    // For the retention job's "older than" across accounts: rows arrive in time order, so a
    // block-range index finds them for a few kilobytes, where a B-tree would double the writes.
    index('usage_records_created_brin').using('brin', t.createdAt),
  ],
);

// The ledger's hourly totals per account, key, provider, model and ladder, kept up to date in
// the statement that writes the raw rows; reports read them for every whole hour of a range
// (docs/quotas.md), and they outlive the raw rows (USAGE_RAW_RETENTION_DAYS).
const tokens = (name: string) => bigint(name, { mode: 'number' }).notNull();
export const usageHourly = pgTable(
  'usage_hourly',
  {
    accountId: uuid('account_id').notNull(),
    /** The UTC hour the calls ended in. */
    hour: timestamp('hour', { withTimezone: true, mode: 'date' }).notNull(),
    apiKeyId: uuid('api_key_id'),
    provider: text('provider'),
    model: text('model').notNull(),
    ladder: text('ladder'),
    requests: tokens('requests'),
    promptTokens: tokens('prompt_tokens'),
    completionTokens: tokens('completion_tokens'),
    totalTokens: tokens('total_tokens'),
    costNanos: nanos('cost_nanos').notNull(),
  },
  // Leads with (account, hour): a report's range is one index range. NULLS NOT DISTINCT, so a
  // direct call's group (no ladder) is one row too.
  (t) => [unique('usage_hourly_group_key').on(t.accountId, t.hour, t.apiKeyId, t.provider, t.model, t.ladder).nullsNotDistinct()],
);

// Ledger batches already written, by the id each batch keeps across its retries: a batch whose
// commit succeeded but whose acknowledgement was lost is not written twice. Kept one day.
export const usageBatches = pgTable(
  'usage_batches',
  {
    id: uuid('id').primaryKey(),
    createdAt: createdAt(),
  },
  (t) => [index('usage_batches_created_idx').on(t.createdAt)],
);
// ---- end of quotas ---------------------------------------------------------------------------

// ---- Webhooks (issue 20, item 3; docs/webhooks.md) ------------------------------------------

export type WebhookEventType = 'instance.completed' | 'instance.failed' | 'instance.cancelled';

// An account's endpoints. The signing secret is sealed like provider keys (secret-box.ts).
// `failing_since` starts a failure streak and is cleared by any success; an endpoint that has
// been failing for 3 days gets `disabled_at` and `disabled_reason`, and is sent nothing more.
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    description: text('description').notNull().default(''),
    events: jsonb('events').$type<WebhookEventType[]>().notNull(),
    secretCiphertext: text('secret_ciphertext').notNull(),
    /** After a rotation the old secret also signs, until `previous_secret_expires_at`, so receivers can switch over. */
    previousSecretCiphertext: text('previous_secret_ciphertext'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, mode: 'date' }),
    failingSince: timestamp('failing_since', { withTimezone: true, mode: 'date' }),
    disabledAt: timestamp('disabled_at', { withTimezone: true, mode: 'date' }),
    disabledReason: text('disabled_reason'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('webhook_endpoints_account_idx').on(t.accountId, t.createdAt)],
);

export type WebhookDeliveryStatus = 'pending' | 'sending' | 'delivered' | 'failed';

// One message to one endpoint, queued in the statement that finished its instance. Senders
// claim due rows (FOR UPDATE SKIP LOCKED) with a lease that outlasts one attempt's timeout;
// every claim bumps `fence`, and an attempt is recorded only under the fence it was claimed
// with. `payload` is fixed at the first attempt, so every retry sends the same bytes.
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    /** No foreign key: the delivery's history outlives the instance's retention. */
    instanceId: uuid('instance_id'),
    payload: text('payload'),
    status: text('status').$type<WebhookDeliveryStatus>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    fence: integer('fence').notNull().default(0),
    claimedBy: text('claimed_by'),
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
  ],
);

// Every attempt of a delivery: when, how it went. (delivery, attempt) is unique, so one attempt is recorded once.
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
    statusCode: integer('status_code'),
    latencyMs: integer('latency_ms').notNull(),
    error: text('error'),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.attempt] })],
);
// ---- end of webhooks -------------------------------------------------------------------------

// ---- Responses API (issue 19, item 2; docs/responses.md) -------------------------------------
// One row per stored response (`store` true, the default): the request's own input items and
// the answer, so GET, input_items and previous_response_id can rebuild a conversation on any
// vendor. `previous_id` is no foreign key: deleting a response leaves its followers readable.
export const responses = pgTable(
  'responses',
  {
    id: uuid('id').primaryKey(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    previousId: uuid('previous_id'),
    /** This request's input items, each with its id (`msg_…`, `fc_…`). */
    inputItems: jsonb('input_items').$type<unknown[]>().notNull(),
    /** The response object as answered (its `output` items are the model's turn). */
    body: jsonb('body').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  // Reads are by id and account (the primary key finds the row); the retention job reads by age.
  (t) => [index('responses_created_brin').using('brin', t.createdAt)],
);
// ---- end of the Responses API ------------------------------------------------------------------

// ---- Accounts and the audit log (issue 23; docs/accounts.md) ---------------------------------

export type AuditActorType = 'admin' | 'api_key' | 'cli';

// One row per administrative change: who (the admin token, the command line, or which key),
// what, to which account, when. Never a secret. No foreign keys: the log outlives what it names.
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    createdAt: createdAt(),
    actorType: text('actor_type').$type<AuditActorType>().notNull(),
    actorKeyId: uuid('actor_key_id'),
    accountId: uuid('account_id'),
    /** The account's username at the time, so the entry reads well after the account is gone. */
    username: text('username'),
    action: text('action').notNull(),
    targetId: text('target_id'),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
  },
  (t) => [index('audit_log_username_idx').on(t.username, t.id), index('audit_log_created_idx').on(t.createdAt)],
);
// ---- end of accounts -------------------------------------------------------------------------
