// Stored responses, per account: written once when an answer is done, read by id, listed
// input items, and the chain of previous responses that previous_response_id continues.
import { and, eq } from 'drizzle-orm';
import type { Database, Db } from '../db/client.js';
import { responses } from '../db/schema.js';
import { storableJson } from '../unicode.js';
import { uuidOf } from './ids.js';
import type { Item } from './input.js';

/** Responses a conversation may chain back through; older turns beyond it are left out of the context. */
export const MAX_CHAIN = 1000;

export interface StoredResponse {
  body: Record<string, unknown>;
  inputItems: Item[];
}

// Walks previous_id links from the newest, within one account; a deleted link ends the chain.
const CHAIN_SQL = `
WITH RECURSIVE chain AS (
  SELECT id, previous_id, input_items, body -> 'output' AS output, 0 AS depth FROM responses WHERE id = $1 AND account_id = $2
  UNION ALL
  SELECT r.id, r.previous_id, r.input_items, r.body -> 'output', c.depth + 1
  FROM responses r JOIN chain c ON r.id = c.previous_id
  WHERE r.account_id = $2 AND c.depth < $3
)
SELECT input_items, output FROM chain ORDER BY depth DESC`;

export function createResponseStore(db: Db, database: Pick<Database, 'query'>) {
  return {
    /** `body` and items may carry vendor and caller text: made storable (no NUL, no lone surrogate) here. */
    async save(accountId: string, uuid: string, previousUuid: string | null, inputItems: Item[], body: Record<string, unknown>): Promise<void> {
      await db.insert(responses).values({ id: uuid, accountId, previousId: previousUuid, inputItems: storableJson(inputItems), body: storableJson(body) });
    },

    /** The response if `accountId` owns it; null for anyone else's, an unknown or a malformed id alike. */
    async get(accountId: string, id: string): Promise<StoredResponse | null> {
      const uuid = uuidOf(id);
      if (!uuid) return null;
      const [row] = await db.select({ body: responses.body, inputItems: responses.inputItems }).from(responses).where(and(eq(responses.id, uuid), eq(responses.accountId, accountId)));
      return row ? { body: row.body, inputItems: row.inputItems as Item[] } : null;
    },

    async delete(accountId: string, id: string): Promise<boolean> {
      const uuid = uuidOf(id);
      if (!uuid) return false;
      const gone = await db.delete(responses).where(and(eq(responses.id, uuid), eq(responses.accountId, accountId))).returning({ id: responses.id });
      return gone.length > 0;
    },

    /**
     * The conversation up to and including response `id`: every input and output item, oldest
     * first. Null when `id` is not one of this account's stored responses.
     */
    async conversation(accountId: string, id: string): Promise<{ uuid: string; items: Item[] } | null> {
      const uuid = uuidOf(id);
      if (!uuid) return null;
      const rows = await database.query<{ input_items: Item[]; output: Item[] | null }>(CHAIN_SQL, [uuid, accountId, MAX_CHAIN - 1]);
      if (rows.length === 0) return null;
      return { uuid, items: rows.flatMap((r) => [...r.input_items, ...(r.output ?? [])]) };
    },
  };
}

export type ResponseStore = ReturnType<typeof createResponseStore>;
