// Ladders: push (validate and save files as new versions), list, show, delete.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { invalidRequest } from '../../errors.js';
import { integer, ladderRef, ownerOf, required, text, UsageError, type Command, type Context } from '../command.js';

const VISIBILITY = { type: 'string' } as const;
const LIST_COLUMNS = ['slug', 'name', 'version', 'usage_visibility', 'config_visibility', 'updated_at'];

async function ownerService(context: Context, username: string) {
  const { db } = await context.database();
  const [{ findAccount }, { createLadderService }] = await Promise.all([import('../../services/accounts.js'), import('../../services/ladders.js')]);
  return { owner: ownerOf(await findAccount(db, username)), ladders: createLadderService(db) };
}

export const ladderCommands: Command[] = [
  {
    name: 'push-ladder',
    args: '<username> <file>... [--slug S] [--visibility V] [--config-visibility V] [--description D]',
    summary: 'validate JSON or YAML ladder configs and save each as a new version',
    details: [
      'The slug defaults to the file name without its extension, lowercased (`My Ladder.v2.yaml` -> my-ladder-v2);',
      '--slug is for one file only. Visibilities are private (default), unlisted or public; omitted ones keep their',
      'saved values. Files are pushed in order; the first one that does not validate stops the command.',
    ].join('\n'),
    options: { slug: { type: 'string' }, visibility: VISIBILITY, 'config-visibility': VISIBILITY, description: { type: 'string' } },
    run: async (context, [username, ...files], flags) => {
      const name = required(username, 'username');
      if (files.length === 0) throw new UsageError('missing file');
      if (flags.slug !== undefined && files.length > 1) throw new UsageError('--slug names one ladder: give one file with it');
      const usageVisibility = visibility(flags.visibility, '--visibility');
      const configVisibility = visibility(flags['config-visibility'], '--config-visibility');
      const { owner, ladders } = await ownerService(context, name);
      const { parseConfigText } = await import('../../ladders/language/parse-text.js');
      const pushed = [];
      for (const file of files) {
        let config: unknown;
        try {
          config = parseConfigText(await readFile(file, 'utf8'), file);
        } catch (error) {
          throw invalidRequest('invalid_ladder_file', error instanceof Error ? error.message : String(error));
        }
        const description = text(flags.description);
        const { metadata } = await ladders.save(owner, owner.username, text(flags.slug) ?? slugFromFile(file), {
          config,
          ...(description !== undefined ? { description } : {}),
          ...(usageVisibility ? { usageVisibility } : {}),
          ...(configVisibility ? { configVisibility } : {}),
        });
        const { config: _saved, allowed_targets: _targets, ...summary } = metadata;
        pushed.push(summary);
      }
      return files.length === 1 ? pushed[0]! : { data: pushed, columns: LIST_COLUMNS };
    },
  },
  {
    name: 'list-ladders',
    args: '<username>',
    summary: "list an author's ladders, private ones included",
    run: async (context, [username]) => {
      const { owner, ladders } = await ownerService(context, required(username, 'username'));
      return { data: await ladders.list(owner, owner.username), columns: LIST_COLUMNS };
    },
  },
  {
    name: 'show-ladder',
    args: '<author/slug> [--version N]',
    summary: "a ladder's metadata and config, at its current or an earlier version",
    options: { version: { type: 'string' } },
    run: async (context, [ref], flags) => {
      const [author, slug] = ladderRef(ref);
      const { owner, ladders } = await ownerService(context, author);
      return ladders.describe(owner, author, slug, integer(flags.version, '--version'));
    },
  },
  {
    name: 'delete-ladder',
    args: '<author/slug>',
    summary: 'delete a ladder and all its versions (its runs keep their record)',
    run: async (context, [ref]) => {
      const [author, slug] = ladderRef(ref);
      const { owner, ladders } = await ownerService(context, author);
      await ladders.remove(owner, author, slug);
      return { deleted: `${author}/${slug}` };
    },
  },
];

/** `My Ladder.v2.yaml` -> `my-ladder-v2`: lowercased, other characters to '-'. */
function slugFromFile(fileName: string): string {
  const base = path.basename(fileName).replace(/\.(ya?ml|json)$/i, '');
  return base.toLowerCase().replace(/[^a-z0-9_-]/g, '-');
}

function visibility(value: string | boolean | string[] | undefined, flag: string): 'private' | 'unlisted' | 'public' | undefined {
  if (value === undefined || value === 'private' || value === 'unlisted' || value === 'public') return value;
  throw new UsageError(`${flag} must be private, unlisted or public`);
}
