// Services for the live event streams: the reader of `instance_events`, and the one shared
// LISTEN that wakes streams when a writer announces new events.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import {
  createEventWakeups,
  createInstanceEventReader,
  type EventWakeups,
  type InstanceEventReader,
} from '../services/instance-events.js';

declare module 'fastify' {
  interface FastifyInstance {
    instanceEvents: InstanceEventReader;
    eventWakeups: EventWakeups;
  }
}

async function instanceEventsPlugin(app: FastifyInstance) {
  app.decorate('instanceEvents', createInstanceEventReader(app.db));
  const wakeups = createEventWakeups(app.database, (error, failed) => app.log.warn({ err: error }, failed));
  app.decorate('eventWakeups', wakeups);
  app.addHook('onClose', () => wakeups.close());
}

export default fp(instanceEventsPlugin, { name: 'instance-events', fastify: '5.x', dependencies: ['infrastructure'] });
