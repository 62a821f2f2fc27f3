-- Money becomes whole nano-dollars (src/money.ts): each double-precision dollar column is renamed
-- and converted in place, so existing rows keep their amounts. The cast to numeric keeps 15
-- significant digits, which drops float noise (6.434999999999999e-05 becomes 64350 nanos).
ALTER TABLE "instance_calls" RENAME COLUMN "cost_usd" TO "cost_nanos";--> statement-breakpoint
ALTER TABLE "instance_calls" ALTER COLUMN "cost_nanos" SET DATA TYPE bigint USING round("cost_nanos"::numeric * 1000000000)::bigint;--> statement-breakpoint
ALTER TABLE "instance_calls" RENAME COLUMN "saved_usd" TO "saved_nanos";--> statement-breakpoint
ALTER TABLE "instance_calls" ALTER COLUMN "saved_nanos" SET DATA TYPE bigint USING round("saved_nanos"::numeric * 1000000000)::bigint;--> statement-breakpoint
ALTER TABLE "instances" RENAME COLUMN "spend_usd" TO "spend_nanos";--> statement-breakpoint
ALTER TABLE "instances" ALTER COLUMN "spend_nanos" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "instances" ALTER COLUMN "spend_nanos" SET DATA TYPE bigint USING round("spend_nanos"::numeric * 1000000000)::bigint;--> statement-breakpoint
ALTER TABLE "instances" ALTER COLUMN "spend_nanos" SET DEFAULT 0;--> statement-breakpoint
-- Monthly limits above the new maximum of $9,000,000 (what a JS number holds exactly in nanos) are
-- clamped to it (a CASE, not least(), which would turn a null, unlimited, into the maximum).
ALTER TABLE "quota_limits" RENAME COLUMN "usd_per_day" TO "nanos_per_day";--> statement-breakpoint
ALTER TABLE "quota_limits" ALTER COLUMN "nanos_per_day" SET DATA TYPE bigint USING round("nanos_per_day"::numeric * 1000000000)::bigint;--> statement-breakpoint
ALTER TABLE "quota_limits" RENAME COLUMN "usd_per_month" TO "nanos_per_month";--> statement-breakpoint
ALTER TABLE "quota_limits" ALTER COLUMN "nanos_per_month" SET DATA TYPE bigint USING (CASE WHEN "nanos_per_month" > 9000000 THEN 9000000000000000 ELSE round("nanos_per_month"::numeric * 1000000000) END)::bigint;--> statement-breakpoint
-- Spend counters hold dollars, the rate counters whole requests and tokens already.
ALTER TABLE "quota_windows" ALTER COLUMN "amount" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "quota_windows" ALTER COLUMN "amount" SET DATA TYPE bigint USING round(CASE WHEN "metric" IN ('usd_day', 'usd_month') THEN "amount"::numeric * 1000000000 ELSE "amount"::numeric END)::bigint;--> statement-breakpoint
ALTER TABLE "quota_windows" ALTER COLUMN "amount" SET DEFAULT 0;--> statement-breakpoint
ALTER TABLE "quota_windows" ALTER COLUMN "last_grant" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "quota_windows" ALTER COLUMN "last_grant" SET DATA TYPE bigint USING round(CASE WHEN "metric" IN ('usd_day', 'usd_month') THEN "last_grant"::numeric * 1000000000 ELSE "last_grant"::numeric END)::bigint;--> statement-breakpoint
ALTER TABLE "quota_windows" ALTER COLUMN "last_grant" SET DEFAULT 0;--> statement-breakpoint
ALTER TABLE "usage_hourly" RENAME COLUMN "cost_usd" TO "cost_nanos";--> statement-breakpoint
ALTER TABLE "usage_hourly" ALTER COLUMN "cost_nanos" SET DATA TYPE bigint USING round("cost_nanos"::numeric * 1000000000)::bigint;--> statement-breakpoint
ALTER TABLE "usage_records" RENAME COLUMN "cost_usd" TO "cost_nanos";--> statement-breakpoint
ALTER TABLE "usage_records" ALTER COLUMN "cost_nanos" SET DATA TYPE bigint USING round("cost_nanos"::numeric * 1000000000)::bigint;
--> statement-breakpoint
-- A finished run's trace (instances.trace: steps, each with its nodes) keeps each call's cost as
-- costUsd and savedUsd; they become costNanos and savedNanos, in order, the rest of each node kept.
UPDATE "instances" SET "trace" = (
  SELECT jsonb_agg(
    CASE WHEN jsonb_typeof(step -> 'nodes') = 'array' THEN step || jsonb_build_object('nodes', (
      SELECT coalesce(jsonb_agg(
        CASE WHEN jsonb_typeof(node -> 'costUsd') = 'number' THEN
          (node - 'costUsd' - 'savedUsd')
            || jsonb_build_object('costNanos', round((node ->> 'costUsd')::numeric * 1000000000))
            || CASE WHEN jsonb_typeof(node -> 'savedUsd') = 'number'
                 THEN jsonb_build_object('savedNanos', round((node ->> 'savedUsd')::numeric * 1000000000)) ELSE '{}'::jsonb END
        ELSE node END ORDER BY n), '[]'::jsonb)
      FROM jsonb_array_elements(step -> 'nodes') WITH ORDINALITY AS nodes(node, n)))
    ELSE step END ORDER BY s)
  FROM jsonb_array_elements("trace") WITH ORDINALITY AS steps(step, s)
) WHERE jsonb_typeof("trace") = 'array' AND jsonb_array_length("trace") > 0;
