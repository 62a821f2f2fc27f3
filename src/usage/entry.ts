// One row of the usage ledger, as the metering records it and the ledger writes it.
import type { Usage } from '../providers/types.js';

export interface UsageEntry {
  /** When the call ended, in ms since the epoch. */
  at: number;
  accountId: string;
  apiKeyId: string | null;
  provider: string | null;
  model: string;
  /** `author/slug` for a ladder's calls. */
  ladder: string | null;
  instanceId: string | null;
  usage: Usage;
  costNanos: number;
  /** `ok`, or the error code the call failed with. */
  outcome: string;
}
