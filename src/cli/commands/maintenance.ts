// Database maintenance: migrations and re-encryption after a key rotation.
import type { Command } from '../command.js';

export const maintenanceCommands: Command[] = [
  {
    name: 'migrate',
    args: '',
    summary: 'apply pending database migrations (the server also does at every start)',
    details: 'While a server holds the embedded database, it has applied them when it started: this only checks that it answers.',
    run: async (context) => {
      // Opening the database applies them; a running server applied them at its start.
      if (context.server) await context.server().call('GET', '/accounts');
      else await context.database();
      return { migrated: true };
    },
  },
  {
    name: 'reencrypt',
    args: '',
    summary: 'reseal every stored provider key under the current encryption key',
    details: 'Keep the old key in ENCRYPTION_KEY_PREVIOUS until this has run (README, "Rotating the encryption key").',
    run: async (context) => {
      if (context.server) return context.server().call('POST', '/reencrypt');
      const [{ loadSecretBox }, { connectionServiceOptions, createConnectionService }] = await Promise.all([
        import('../../crypto/data-dir-secrets.js'), import('../../services/provider-connections.js'),
      ]);
      const service = createConnectionService((await context.database()).db, await loadSecretBox(context.config), connectionServiceOptions(context.config, 0));
      return service.reencryptAll();
    },
  },
];
