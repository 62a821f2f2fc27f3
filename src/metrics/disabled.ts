// Metrics off (neither METRICS_TOKEN nor METRICS_PORT set): the recorder's calls, doing
// nothing. Apart from recorder.ts, so that a service without metrics never loads prom-client
// (tens of milliseconds of every start).
import { METRICS_CONTENT_TYPE } from './catalog.js';
import type { Metrics } from './recorder.js';

export const disabledMetrics: Metrics = {
  enabled: false,
  contentType: METRICS_CONTENT_TYPE,
  scrape: async () => '',
  httpRequest: () => {},
  providerAttempts: () => {},
  streamStarted: () => {},
  streamEnded: () => {},
  runFinished: () => {},
  modelCall: () => {},
  usageRowRejected: () => {},
  workerBusy: () => {},
  watchCircuits: () => {},
  watchInstances: () => {},
  watchLogDrops: () => {},
};
