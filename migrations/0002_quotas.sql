CREATE TABLE "quota_limits" (
	"scope" text NOT NULL,
	"subject_id" uuid NOT NULL,
	"requests_per_minute" integer,
	"tokens_per_minute" integer,
	"usd_per_day" double precision,
	"usd_per_month" double precision,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "quota_limits_scope_subject_id_pk" PRIMARY KEY("scope","subject_id")
);
--> statement-breakpoint
CREATE TABLE "quota_windows" (
	"scope" text NOT NULL,
	"subject_id" uuid NOT NULL,
	"metric" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"amount" double precision DEFAULT 0 NOT NULL,
	"last_grant" double precision DEFAULT 0 NOT NULL,
	CONSTRAINT "quota_windows_scope_subject_id_metric_window_start_pk" PRIMARY KEY("scope","subject_id","metric","window_start")
);
--> statement-breakpoint
CREATE TABLE "usage_records" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"account_id" uuid NOT NULL,
	"api_key_id" uuid,
	"provider" text,
	"model" text NOT NULL,
	"ladder" text,
	"instance_id" uuid,
	"prompt_tokens" integer NOT NULL,
	"completion_tokens" integer NOT NULL,
	"total_tokens" integer NOT NULL,
	"cost_usd" double precision NOT NULL,
	"outcome" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "quota_windows_start_idx" ON "quota_windows" USING btree ("window_start");--> statement-breakpoint
CREATE INDEX "usage_records_account_created_idx" ON "usage_records" USING btree ("account_id","created_at");