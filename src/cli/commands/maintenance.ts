// Database maintenance: migrations and re-encryption after a key rotation.
import type { Command } from '../command.js';

export const maintenanceCommands: Command[] = [
  {
    name: 'migrate',
    args: '',
    summary: 'apply pending database migrations (the server also does at every start)',
    // Opening the database applies them.
    run: async (context) => {
      await context.database();
      return { migrated: true };
    },
  },
  {
    name: 'reencrypt',
    args: '',
    summary: 'reseal every stored provider key under the current encryption key',
    details: 'Keep the old key in ENCRYPTION_KEY_PREVIOUS until this has run (README, "Rotating the encryption key").',
    run: async (context) => {
      const [{ loadSecretBox }, { connectionServiceOptions, createConnectionService }] = await Promise.all([
        import('../../crypto/data-dir-secrets.js'), import('../../services/provider-connections.js'),
      ]);
      const service = createConnectionService((await context.database()).db, await loadSecretBox(context.config), connectionServiceOptions(context.config, 0));
      return service.reencryptAll();
    },
  },
];
