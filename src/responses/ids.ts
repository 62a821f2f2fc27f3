// Ids in OpenAI's forms: `resp_` and the row's UUID as 32 hex digits (so a lookup needs no
// second column), and `msg_…` / `fc_…` / `rs_…` for items.
import { randomBytes, randomUUID } from 'node:crypto';

const RESPONSE_ID = /^resp_([0-9a-f]{32})$/;

export function newResponseId(): { id: string; uuid: string } {
  const uuid = randomUUID();
  return { id: `resp_${uuid.replace(/-/g, '')}`, uuid };
}

/** The row key of a response id; null for anything this service did not hand out. */
export function uuidOf(id: string): string | null {
  const hex = RESPONSE_ID.exec(id)?.[1];
  if (!hex) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const responseIdOf = (uuid: string) => `resp_${uuid.replace(/-/g, '')}`;

/** An item id: the kind's prefix and 48 hex digits, as long as OpenAI's. */
export const itemId = (prefix: 'msg' | 'fc' | 'fco' | 'rs') => `${prefix}_${randomBytes(24).toString('hex')}`;
