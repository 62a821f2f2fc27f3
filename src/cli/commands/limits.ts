// Limits of an account and its API keys: requests and tokens per minute, USD per day and month.
import { required, type Command } from '../command.js';

const work = () => import('./limits-work.js');

export const limitCommands: Command[] = [
  {
    name: 'limits',
    args: '<username> [--key ID] [--rpm N] [--tpm N] [--usd-day X] [--usd-month X]',
    summary: "show an account's limits and its keys'; with flags, change them",
    details:
      'With no flag, lists the limits. A flag changes the account\'s limit (or, with --key, that key\'s); "none" removes it. ' +
      'Absent limits are unlimited (docs/quotas.md).',
    options: { key: { type: 'string' }, rpm: { type: 'string' }, tpm: { type: 'string' }, 'usd-day': { type: 'string' }, 'usd-month': { type: 'string' } },
    run: async (context, [username], flags) => {
      const name = required(username, 'username');
      const { limitChanges, limitsCommand, remoteLimitsCommand } = await work();
      const given = flags as Record<string, string | undefined>;
      limitChanges(given); // a bad value is refused before anything is opened
      const result = context.server ? await remoteLimitsCommand(context.server(), name, given) : await limitsCommand((await context.database()).db, name, given);
      return { ...result, columns: ['subject', 'requests_per_minute', 'tokens_per_minute', 'usd_per_day', 'usd_per_month'] };
    },
  },
];
