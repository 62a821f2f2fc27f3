// `.env` in the working directory, when there is one, fills in settings the environment
// does not already have: a variable set in the real environment always wins.
import { existsSync } from 'node:fs';

export function loadEnvFile(file = '.env'): string | null {
  if (!existsSync(file)) return null;
  process.loadEnvFile(file);
  return file;
}
