// Who may see an instance: the account that started it, through a key whose ladder access list
// admits the instance's ladder. For anyone else, and for a key that may not see the ladder, the
// instance does not exist: the same 404 as an unknown id (docs/pipelines.md), whatever the route.
import { instanceNotFound } from '../../errors.js';
import type { Principal } from '../../services/authenticator.js';
import { mayAccessLadder } from '../../services/ladder-access.js';
import type { InstanceRow, InstanceService } from '../../services/instances.js';

type Owned = Pick<InstanceRow, 'accountId' | 'author' | 'slug'>;

export const mayAccessInstance = (principal: Principal, row: Owned) =>
  row.accountId === principal.accountId && mayAccessLadder(principal.access, row.author, row.slug);

/** The instance `id` if the caller may see it; else 404 instance_not_found, as for an unknown id. */
export async function accessibleInstance(instances: Pick<InstanceService, 'getOwned'>, principal: Principal, id: string): Promise<InstanceRow> {
  const row = await instances.getOwned(principal.accountId, id);
  if (!row || !mayAccessInstance(principal, row)) throw instanceNotFound(id);
  return row;
}

/** The canonical id of instance `id` if the caller may see it (reading no more of the row); else 404 as above. */
export async function accessibleInstanceId(instances: Pick<InstanceService, 'ownerOf'>, principal: Principal, id: string): Promise<string> {
  const row = await instances.ownerOf(id);
  if (!row || !mayAccessInstance(principal, row)) throw instanceNotFound(id);
  return row.id;
}
