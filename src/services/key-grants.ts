// What a key may grant through /v1/api-keys: never more than it holds itself. A key cannot
// widen its own scope, see ladders its own access list hides, or outlive its own expiry, so a
// leaked short-lived or restricted key cannot mint a broader, longer-lived one.
import type { ApiKeyScope } from '../db/schema.js';
import { ApiError } from '../errors.js';
import type { Principal } from './authenticator.js';
import type { LadderAccess } from './ladder-access.js';

export interface KeyGrant {
  scope: ApiKeyScope;
  access: LadderAccess;
  expiresAt: Date | null;
}

const refused = (code: string, message: string, param: string) => new ApiError(403, 'permission_error', code, message, param);

const authorOf = (entry: string) => entry.slice(0, entry.indexOf('/'));
/** Whether `list` names `entry`: the entry itself, or its author's `author/*`. */
const names = (list: string[], entry: string) => list.includes(entry) || list.includes(`${authorOf(entry)}/*`);

/** Whether every ladder `inner` lets through, `outer` lets through too. */
export function accessWithin(inner: LadderAccess, outer: LadderAccess): boolean {
  if (outer.mode === 'unrestricted') return true;
  if (outer.mode === 'whitelist') return inner.mode === 'whitelist' && inner.ladders.every((entry) => names(outer.ladders, entry));
  // Outer is a blacklist: what it refuses, inner must refuse too.
  if (inner.mode === 'whitelist') {
    return inner.ladders.every((entry) =>
      entry.endsWith('/*') ? !outer.ladders.some((o) => authorOf(o) === authorOf(entry)) : !names(outer.ladders, entry),
    );
  }
  return inner.mode === 'blacklist' && outer.ladders.every((entry) => names(inner.ladders, entry));
}

/** Throws 403 when `caller` may not give a key what `grant` asks; a change checks only what it sets. */
export function checkGrant(caller: Principal, grant: Partial<KeyGrant>): void {
  if (grant.scope === 'manage' && caller.scope !== 'manage') {
    throw refused('cannot_widen_scope', 'A key cannot grant the `manage` scope it does not hold.', 'scope');
  }
  if (grant.access && !accessWithin(grant.access, caller.access)) {
    throw refused('cannot_widen_access', 'A key cannot grant access to ladders its own access list does not allow.', 'access');
  }
  if (caller.expiresAt && grant.expiresAt !== undefined && (grant.expiresAt === null || grant.expiresAt > caller.expiresAt)) {
    throw refused(
      'cannot_outlive_creator',
      `This key expires at ${caller.expiresAt.toISOString()}; the keys it creates or changes must expire no later.`,
      'expires_at',
    );
  }
}
