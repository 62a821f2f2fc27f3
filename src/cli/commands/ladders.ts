// Ladders: push (validate and save files as new versions), list, show, delete.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { invalidRequest } from '../../errors.js';
import type { LadderMetadata, SaveLadderBody } from '../../schemas/ladders.js';
import { integer, ladderRef, required, seg, text, UsageError, type Command, type Context } from '../command.js';

const VISIBILITY = { type: 'string' } as const;
const LIST_COLUMNS = ['slug', 'name', 'version', 'usage_visibility', 'config_visibility', 'updated_at'];

async function ownerService(context: Context, username: string) {
  const { db } = await context.database();
  const [{ findAccount, ownerOf }, { createLadderService }] = await Promise.all([import('../../services/accounts.js'), import('../../services/ladders.js')]);
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
      const description = text(flags.description);
      const save = context.server ? remoteSave(context, name) : await localSave(context, name);
      const { parseConfigText } = await import('../../ladders/language/parse-text.js');
      const pushed = [];
      for (const file of files) {
        let config: unknown;
        try {
          config = parseConfigText(await readFile(file, 'utf8'), file);
        } catch (error) {
          throw invalidRequest('invalid_ladder_file', error instanceof Error ? error.message : String(error));
        }
        const metadata = await save(text(flags.slug) ?? slugFromFile(file), {
          config,
          ...(description !== undefined ? { description } : {}),
          ...(usageVisibility ? { usage_visibility: usageVisibility } : {}),
          ...(configVisibility ? { config_visibility: configVisibility } : {}),
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
      const name = required(username, 'username');
      if (context.server) return { data: (await context.server().call<{ data: LadderMetadata[] }>('GET', `/accounts/${seg(name)}/ladders`)).data, columns: LIST_COLUMNS };
      const { owner, ladders } = await ownerService(context, name);
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
      const version = integer(flags.version, '--version');
      if (context.server) return context.server().call('GET', `/accounts/${seg(author)}/ladders/${seg(slug)}${version === undefined ? '' : `?version=${version}`}`);
      const { owner, ladders } = await ownerService(context, author);
      return ladders.describe(owner, author, slug, version);
    },
  },
  {
    name: 'delete-ladder',
    args: '<author/slug>',
    summary: 'delete a ladder and all its versions (its runs keep their record)',
    run: async (context, [ref]) => {
      const [author, slug] = ladderRef(ref);
      if (context.server) await context.server().call('DELETE', `/accounts/${seg(author)}/ladders/${seg(slug)}`);
      else {
        const { owner, ladders } = await ownerService(context, author);
        await ladders.remove(owner, author, slug);
      }
      return { deleted: `${author}/${slug}` };
    },
  },
];

type SaveBody = Omit<SaveLadderBody, 'config'> & { config: unknown };
type Save = (slug: string, body: SaveBody) => Promise<LadderMetadata>;

/** Saves through the database: the service validates as the API does. */
async function localSave(context: Context, username: string): Promise<Save> {
  const { owner, ladders } = await ownerService(context, username);
  return async (slug, { config, description, usage_visibility, config_visibility }) =>
    (await ladders.save(owner, owner.username, slug, {
      config,
      ...(description !== undefined ? { description } : {}),
      ...(usage_visibility ? { usageVisibility: usage_visibility } : {}),
      ...(config_visibility ? { configVisibility: config_visibility } : {}),
    })).metadata;
}

/** Saves through the running server's admin API. */
function remoteSave(context: Context, username: string): Save {
  const api = context.server!();
  return (slug, body) => api.call<LadderMetadata>('PUT', `/accounts/${seg(username)}/ladders/${seg(slug)}`, body);
}

/** `My Ladder.v2.yaml` -> `my-ladder-v2`: lowercased, other characters to '-'. */
function slugFromFile(fileName: string): string {
  const base = path.basename(fileName).replace(/\.(ya?ml|json)$/i, '');
  return base.toLowerCase().replace(/[^a-z0-9_-]/g, '-');
}

function visibility(value: string | boolean | string[] | undefined, flag: string): 'private' | 'unlisted' | 'public' | undefined {
  if (value === undefined || value === 'private' || value === 'unlisted' || value === 'public') return value;
  throw new UsageError(`${flag} must be private, unlisted or public`);
}
