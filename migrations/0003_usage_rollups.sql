CREATE TABLE "usage_batches" (
	"id" uuid PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_hourly" (
	"account_id" uuid NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"api_key_id" uuid,
	"provider" text,
	"model" text NOT NULL,
	"ladder" text,
	"requests" bigint NOT NULL,
	"prompt_tokens" bigint NOT NULL,
	"completion_tokens" bigint NOT NULL,
	"total_tokens" bigint NOT NULL,
	"cost_usd" double precision NOT NULL,
	CONSTRAINT "usage_hourly_group_key" UNIQUE NULLS NOT DISTINCT("account_id","hour","api_key_id","provider","model","ladder")
);
--> statement-breakpoint
CREATE INDEX "usage_batches_created_idx" ON "usage_batches" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "usage_records_created_brin" ON "usage_records" USING brin ("created_at");--> statement-breakpoint
-- The hourly totals of every row written before this migration, so that reports read them too.
INSERT INTO "usage_hourly" ("account_id", "hour", "api_key_id", "provider", "model", "ladder", "requests", "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd")
SELECT "account_id", date_trunc('hour', "created_at", 'UTC'), "api_key_id", "provider", "model", "ladder", count(*), sum("prompt_tokens"), sum("completion_tokens"), sum("total_tokens"), sum("cost_usd")
FROM "usage_records"
GROUP BY 1, 2, 3, 4, 5, 6;
