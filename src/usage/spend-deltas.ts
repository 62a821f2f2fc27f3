// What a ledger batch adds to each spend counter: one delta per scope, id, metric and window,
// in the order the rows first charge them. Kept by scope and id, each id holding its few
// (metric, window) pairs, so that charging a row builds no lookup key: a string key per row,
// scope and metric was most of what a batch allocated per row.
import type { QuotaScope } from '../db/schema.js';
import { type SpendDelta, type SpendMetric } from '../quotas/spend.js';
import { windowOf } from '../quotas/windows.js';
import type { UsageEntry } from './entry.js';

export interface SpendDeltas {
  /** Every delta, in the order first charged. */
  list: SpendDelta[];
  /** What the batch added to this counter's window; 0 when it added nothing. */
  amountOf(scope: QuotaScope, id: string, metric: SpendMetric, windowStart: number): number;
}

export function spendDeltas(rows: UsageEntry[]): SpendDeltas {
  const list: SpendDelta[] = [];
  const byScope: Record<QuotaScope, Map<string, SpendDelta[]>> = { account: new Map(), api_key: new Map() };
  const find = (scope: QuotaScope, id: string, metric: SpendMetric, windowStart: number) => {
    for (const d of byScope[scope].get(id) ?? []) if (d.metric === metric && d.windowStart === windowStart) return d;
    return undefined;
  };

  const charge = (scope: QuotaScope, id: string, metric: SpendMetric, windowStart: number, amount: number) => {
    const delta = find(scope, id, metric, windowStart);
    if (delta) {
      delta.amount += amount;
      return;
    }
    const added: SpendDelta = { scope, id, metric, windowStart, amount };
    list.push(added);
    const own = byScope[scope].get(id);
    if (own) own.push(added);
    else byScope[scope].set(id, [added]);
  };

  // Each row's windows are worked out once, for both of its scopes.
  const chargeRow = (scope: QuotaScope, id: string, day: number, month: number, amount: number) => {
    charge(scope, id, 'usd_day', day, amount);
    charge(scope, id, 'usd_month', month, amount);
  };
  // A batch's rows mostly share one day: its windows are worked out again only when a row leaves it.
  let day = 0;
  let dayEnd = 0;
  let month = 0;
  for (const entry of rows) {
    if (entry.costNanos <= 0) continue;
    if (entry.at < day || entry.at >= dayEnd) {
      ({ start: day, end: dayEnd } = windowOf('usd_day', entry.at));
      month = windowOf('usd_month', entry.at).start;
    }
    chargeRow('account', entry.accountId, day, month, entry.costNanos);
    if (entry.apiKeyId) chargeRow('api_key', entry.apiKeyId, day, month, entry.costNanos);
  }
  return { list, amountOf: (scope, id, metric, windowStart) => find(scope, id, metric, windowStart)?.amount ?? 0 };
}
