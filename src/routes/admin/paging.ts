// Cursor pages of the admin lists: `limit` 1 to 100, and cursors that are opaque to the caller
// (base64url of the last item's sort key) and checked on the way back in.
import { invalidCursor, invalidRequest } from '../../errors.js';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

export function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const limit = /^\d{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw invalidRequest('invalid_value', `limit must be an integer from 1 to ${MAX_LIMIT}.`, 'limit');
  return limit;
}

export const encodeCursor = (position: string) => Buffer.from(position, 'utf8').toString('base64url');

/** The position a cursor of ours names, if it has the shape `pattern` allows; else 400 invalid_cursor. */
export function decodeCursor(cursor: string, pattern: RegExp): string {
  const position = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!pattern.test(position) || encodeCursor(position) !== cursor) throw invalidCursor();
  return position;
}
