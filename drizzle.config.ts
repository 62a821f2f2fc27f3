import { defineConfig } from 'drizzle-kit';

// Generates SQL migrations from the schema; it needs no database connection.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './migrations',
});
