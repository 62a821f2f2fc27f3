CREATE TABLE "instance_calls" (
	"instance_id" uuid NOT NULL,
	"call_key" text NOT NULL,
	"output" text NOT NULL,
	"usage" jsonb NOT NULL,
	"cost_usd" double precision NOT NULL,
	"provider" text,
	"latency_ms" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "instance_calls_instance_id_call_key_pk" PRIMARY KEY("instance_id","call_key")
);
--> statement-breakpoint
CREATE TABLE "instance_events" (
	"instance_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "instance_events_instance_id_seq_pk" PRIMARY KEY("instance_id","seq")
);
--> statement-breakpoint
DROP INDEX "instances_account_created_idx";--> statement-breakpoint
ALTER TABLE "instances" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "instances" ADD COLUMN "fence" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "instances" ADD COLUMN "cancel_requested_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "instances" ADD COLUMN "idempotency_key" text;--> statement-breakpoint
ALTER TABLE "instances" ADD COLUMN "request_hash" text;--> statement-breakpoint
ALTER TABLE "instances" ADD COLUMN "steps_total" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "instances" ADD COLUMN "steps_completed" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "instance_calls" ADD CONSTRAINT "instance_calls_instance_id_instances_id_fk" FOREIGN KEY ("instance_id") REFERENCES "public"."instances"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "instance_events" ADD CONSTRAINT "instance_events_instance_id_instances_id_fk" FOREIGN KEY ("instance_id") REFERENCES "public"."instances"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "instances_status_lease_idx" ON "instances" USING btree ("status","lease_expires_at");--> statement-breakpoint
CREATE INDEX "instances_finished_idx" ON "instances" USING btree ("finished_at");--> statement-breakpoint
CREATE UNIQUE INDEX "instances_account_idempotency_idx" ON "instances" USING btree ("account_id","idempotency_key") WHERE "instances"."idempotency_key" is not null;--> statement-breakpoint
CREATE INDEX "instances_account_created_idx" ON "instances" USING btree ("account_id","created_at","id");--> statement-breakpoint
-- One vocabulary for a finished run in the database, the API and the docs.
UPDATE "instances" SET "status" = 'completed' WHERE "status" = 'succeeded';
