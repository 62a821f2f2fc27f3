// Limits of accounts and API keys, and the usage report (docs/quotas.md).
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, Timestamp } from './common.js';

const nullable = <T extends ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Number>>(schema: T, description: string) =>
  Type.Optional(Type.Union([schema, Type.Null()], { description: `${description}; null or absent: unlimited` }));

export const LimitsBodySchema = Type.Object(
  {
    requests_per_minute: nullable(Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), 'Model calls per UTC minute'),
    tokens_per_minute: nullable(Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), 'Tokens (prompt + completion) per UTC minute'),
    usd_per_day: nullable(Type.Number({ minimum: 0, maximum: 1_000_000 }), 'Spend in USD per UTC day, at most 9 decimals (whole nano-dollars)'),
    usd_per_month: nullable(Type.Number({ minimum: 0, maximum: 9_000_000 }), 'Spend in USD per UTC month, at most 9 decimals (whole nano-dollars)'),
  },
  { additionalProperties: false, description: 'Replaces every limit of the subject: a member left out is unlimited.' },
);
export type LimitsBody = Static<typeof LimitsBodySchema>;

const limitValue = Type.Union([Type.Number(), Type.Null()]);
export const LimitsSchema = Type.Object({
  requests_per_minute: limitValue,
  tokens_per_minute: limitValue,
  usd_per_day: limitValue,
  usd_per_month: limitValue,
});

export const GROUP_BY = ['day', 'model', 'provider', 'api_key', 'ladder'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export const UsageQuerySchema = Type.Object(
  {
    start: Type.Optional(Type.String({ description: 'Inclusive: `YYYY-MM-DD` (UTC midnight) or an ISO 8601 date-time. Default: the start of the current UTC month' })),
    end: Type.Optional(Type.String({ description: 'Exclusive: a date-time, or `YYYY-MM-DD` meaning through the end of that UTC day. Default: now' })),
    group_by: Type.Optional(StringEnum(GROUP_BY, { default: 'day', description: 'How rows are grouped' })),
    then_by: Type.Optional(StringEnum(GROUP_BY, {
      description: 'A second grouping within each group (e.g. `group_by=day&then_by=model` for a chart stacked by model); each row then has `subgroup`. Must differ from group_by',
    })),
  },
  { additionalProperties: false },
);
export type UsageQuery = Static<typeof UsageQuerySchema>;

export const UsageRowSchema = Type.Object({
  group: Type.Union([Type.String(), Type.Null()], {
    description: 'The day (YYYY-MM-DD), model, provider, API key id or `author/slug`; null for direct calls under `ladder`, for failed calls under `provider`',
  }),
  subgroup: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Only with then_by: the second grouping’s value, null as for `group`' })),
  requests: Type.Integer({ description: 'Model calls, failed ones included' }),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
  cost_usd: Type.Number({ description: 'USD: the exact sum of the calls’ costs, each a whole number of nano-dollars (docs/quotas.md, "Money")' }),
});

export const UsageReportSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(UsageRowSchema),
  start: Timestamp,
  end: Timestamp,
});
export type UsageReport = Static<typeof UsageReportSchema>;
