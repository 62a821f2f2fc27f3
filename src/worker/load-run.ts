// What a claimed background instance runs with: the exact ladder version it was started on,
// and the caller's connections as they are now, filtered by that version's allowedTargets.
import type { Database } from '../db/client.js';
import type { LadderConfig } from '../ladders/language/config.js';
import type { ProviderConnection } from '../providers/types.js';
import { connectionsForTargets } from '../services/ladder-runs.js';
import { allowedTargetsOf, ladderNotFound } from '../services/ladders.js';
import type { ClaimedInstance } from './claim.js';

export interface LoadedRun {
  config: LadderConfig;
  connections: ProviderConnection[];
}

// Saved versions never change, so a process may keep the ones it runs often.
const CONFIG_CACHE_LIMIT = 200;

export function createRunLoader(deps: {
  database: Pick<Database, 'query'>;
  connections: { forRouting(accountId: string): Promise<ProviderConnection[]> };
}) {
  const configs = new Map<string, LadderConfig>();

  async function configOf(row: ClaimedInstance): Promise<LadderConfig> {
    // A deleted ladder takes its versions with it and leaves ladder_id null.
    if (!row.ladderId) throw ladderNotFound(row.author, row.slug);
    const key = `${row.ladderId}@${row.ladderVersion}`;
    const cached = configs.get(key);
    if (cached) return cached;
    const [found] = await deps.database.query<{ config: LadderConfig }>(
      'select config from ladder_versions where ladder_id = $1 and version = $2',
      [row.ladderId, row.ladderVersion],
    );
    if (!found) throw ladderNotFound(row.author, row.slug);
    if (configs.size >= CONFIG_CACHE_LIMIT) configs.clear();
    configs.set(key, found.config);
    return found.config;
  }

  /** Throws the ApiError the run fails with when it cannot start (ladder gone, model no longer allowed). */
  return async function loadRun(row: ClaimedInstance): Promise<LoadedRun> {
    const config = await configOf(row);
    const all = await deps.connections.forRouting(row.accountId);
    const connections = connectionsForTargets(allowedTargetsOf(config), row.model, all, `${row.author}/${row.slug}`);
    return { config, connections };
  };
}

export type RunLoader = ReturnType<typeof createRunLoader>;
