// Services for limits, spend and the usage ledger (docs/quotas.md): the price table every
// cost comes from, the limits cache, the share-based rate pool, spend views, the ledger and
// the metering that the chat and ladder paths call. Registered before providers and ladders.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createPriceTable, type PriceTable } from '../pricing/prices.js';
import { createQuotaGate, type QuotaGate } from '../quotas/gate.js';
import { createLimitsStore, type LimitsStore } from '../quotas/limits-store.js';
import { createRatePool } from '../quotas/rate-pool.js';
import { createSpendHolds } from '../quotas/spend-holds.js';
import { createSpendTracker } from '../quotas/spend.js';
import type { Clock } from '../quotas/windows.js';
import { createLedger, type Ledger } from '../usage/ledger.js';
import { createMetering, type Metering } from '../usage/metering.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The one price table: built-in prices, PRICES_FILE overrides, UNKNOWN_MODEL_PRICE_*. */
    prices: PriceTable;
    limitsStore: LimitsStore;
    quotaGate: QuotaGate;
    usageLedger: Ledger;
    metering: Metering;
    /** The time source of quota windows, ledger rows and usage ranges. */
    quotaClock: Clock;
  }
}

export interface QuotaOptions {
  /** Time source of quota windows and ledger rows. Default Date.now (tests inject their own). */
  clock?: Clock;
}

async function quotas(app: FastifyInstance, options: QuotaOptions) {
  const clock = options.clock ?? Date.now;
  const { config } = app;
  const prices = createPriceTable({ unknownModel: config.ladders.unknownModelPrice, models: config.usage.priceOverrides });
  const log = app.log.child({ component: 'quotas' });
  const limits = createLimitsStore(app.db, config.keyCacheTtlMs);
  const rates = createRatePool(app.db, {
    sharesPerWindow: config.usage.sharesPerWindow,
    onError: (err) => log.warn({ err }, 'fetching a rate-limit share failed'),
  });
  const holds = createSpendHolds(app.database, {
    idleMs: config.usage.spendIdleMs,
    now: clock,
    onError: (err) => log.warn({ err }, 'giving back held spend failed; will retry'),
  });
  const spend = createSpendTracker(app.db, clock, holds);
  const gate = createQuotaGate({ limits, rates, spend, holds, clock });
  const ledger = createLedger(app.database, { flushMs: config.usage.flushMs, flushRows: config.usage.flushRows, spend, clock, log, onRejected: app.metrics.usageRowRejected });
  app.decorate('quotaClock', clock);
  app.decorate('prices', prices);
  app.decorate('limitsStore', limits);
  app.decorate('quotaGate', gate);
  app.decorate('usageLedger', ledger);
  app.decorate('metering', createMetering({ gate, ledger, prices, clock, observe: app.metrics.modelCall })); // metrics: calls and spend
  // onClose hooks run last-registered first, so this flush precedes the database's close,
  // and comes after in-flight requests have finished.
  // The last batch records every finished call's cost: then none of their holds is needed.
  app.addHook('onClose', async () => {
    await ledger.close();
    await holds.releaseAll();
  });
}

export default fp(quotas, { name: 'quotas', fastify: '5.x', dependencies: ['infrastructure', 'metrics'] });
