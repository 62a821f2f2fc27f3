// Per-key ladder access control: which `author/slug` ladders a key may see at all.
import type { LadderAccessMode } from '../db/schema.js';

export interface LadderAccess {
  mode: LadderAccessMode;
  /** `author/slug` entries, or `author/*` for every ladder of that author. */
  ladders: string[];
}

export function mayAccessLadder(access: LadderAccess, author: string, slug: string): boolean {
  if (access.mode === 'unrestricted') return true;
  const listed = access.ladders.includes(`${author}/${slug}`) || access.ladders.includes(`${author}/*`);
  return access.mode === 'whitelist' ? listed : !listed;
}
