ALTER TABLE "instance_calls" ADD COLUMN "prompt_hash" text;--> statement-breakpoint
ALTER TABLE "instance_calls" ADD COLUMN "reused_from" text;--> statement-breakpoint
ALTER TABLE "instance_calls" ADD COLUMN "saved_usd" double precision;--> statement-breakpoint
ALTER TABLE "instances" ADD COLUMN "rerun_of" uuid;