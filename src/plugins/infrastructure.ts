// Infrastructure: the configuration, the database and the secret box, decorated onto the
// instance for the services and routes registered after it; and the embedded database's
// checkpoints, which it has no process of its own for (src/db/checkpoint.ts).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { CHECKPOINT_CHECK_MS, checkpointIfDue } from '../db/checkpoint.js';
import { openDatabase, type Database, type Db } from '../db/client.js';
import { loggableError } from '../db/errors.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { loadSecretBox } from '../crypto/data-dir-secrets.js';
import type { SecretBox } from '../crypto/secret-box.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    db: Db;
    secretBox: SecretBox;
  }
}

export interface InfrastructureOptions {
  config: Config;
  /** An already open database (tests); otherwise one is opened from the config and closed with the app. */
  database?: Database;
  /** The database from the config, already being opened (src/server.ts starts it first); closed with the app. */
  opening?: Promise<Database>;
  secretBox?: SecretBox;
}

async function infrastructure(app: FastifyInstance, options: InfrastructureOptions) {
  const { config } = options;
  if (!options.database) {
    // A new embedded database is made from the build's image (about a second) or by initdb (several).
    if (config.databaseUrl) app.log.info('connecting to PostgreSQL (DATABASE_URL)');
    else app.log.info({ data_dir: config.dataDir }, 'opening the embedded database');
  }
  const database = options.database ?? (await (options.opening ?? openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })));
  if (!options.database) app.addHook('onClose', () => database.close());
  // The server's embedded database may still be opening on its thread while the routes register
  // (their statements wait for it): the first hook before listening, so a failure to open is the
  // error the start reports.
  app.addHook('onReady', async () => {
    await database.opened;
    if (database.created?.from === 'image') app.log.info('created the embedded database from the prebuilt image');
    else if (database.created) app.log.info({ image_skipped: database.created.imageSkipped }, 'created the embedded database (initdb)');
  });
  if (database.kind === 'pglite') {
    const log = app.log.child({ component: 'database' });
    const checkpoint = async () => {
      try {
        const taken = await checkpointIfDue(database);
        if (taken) log.debug({ wal_bytes: taken.walBytes, ms: Math.round(taken.ms) }, 'embedded database checkpoint');
      } catch (error) {
        if (!isDatabaseUnavailable(error)) log.warn({ err: loggableError(error) }, 'embedded database checkpoint failed');
      }
    };
    const timer = setInterval(() => void checkpoint(), CHECKPOINT_CHECK_MS).unref();
    // Before the database closes (which makes a checkpoint of its own).
    app.addHook('preClose', async () => clearInterval(timer));
  }
  app.decorate('config', config);
  app.decorate('database', database);
  app.decorate('db', database.db);
  app.decorate('secretBox', options.secretBox ?? (await loadSecretBox(config)));
}

export default fp(infrastructure, { name: 'infrastructure', fastify: '5.x' });
