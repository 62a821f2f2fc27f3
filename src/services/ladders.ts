// Saved ladders and their versions, and who may see them (docs/ladders-api.md, "Access").
// Every way of not seeing a ladder ends in the same ladderNotFound error, so that a
// response never tells a caller whether a ladder it may not see exists.
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { accounts, ladders, ladderVersions, type Visibility } from '../db/schema.js';
import { ApiError, invalidRequest, notFound } from '../errors.js';
import type { AllowedTargets, LadderConfig } from '../ladders/language/config.js';
import { validateConfig } from '../ladders/language/validator.js';
import { SLUG_PATTERN, USERNAME_PATTERN } from '../schemas/common.js';
import type { LadderMetadata } from '../schemas/ladders.js';
import { mayAccessLadder } from './ladder-access.js';
import type { Principal } from './authenticator.js';

const USERNAME_RE = new RegExp(USERNAME_PATTERN);
const SLUG_RE = new RegExp(SLUG_PATTERN);
const RANK: Record<Visibility, number> = { private: 0, unlisted: 1, public: 2 };

type LadderRow = typeof ladders.$inferSelect;

/** The one answer for a ladder that is missing, hidden from the caller, or excluded by the key. */
export const ladderNotFound = (author: string, slug: string) =>
  notFound('ladder_not_found', `Ladder "${author}/${slug}" was not found.`);

const ladderVersionNotFound = (author: string, slug: string, version: number, current: number) =>
  notFound('ladder_version_not_found', `Ladder "${author}/${slug}" has no version ${version}; its current version is ${current}.`);

export const notLadderOwner = (author: string) =>
  new ApiError(403, 'permission_error', 'not_ladder_owner', `Only "${author}" can save or delete ladders under /v1/${author}/.`);

export const invalidLadderConfig = (errors: string[]) =>
  invalidRequest('invalid_ladder_config', `The ladder config is invalid: ${errors.join('; ')}`, 'config');

export function isValidSlug(slug: string): boolean {
  return SLUG_RE.test(slug);
}

export interface SaveInput {
  config: unknown;
  description?: string;
  usageVisibility?: Visibility;
  configVisibility?: Visibility;
}

/** A ladder the caller may see, at its current version. */
export interface VisibleLadder {
  row: LadderRow;
  author: string;
  config: LadderConfig;
  isOwner: boolean;
}

export function createLadderService(db: Db) {
  // Every run of a saved ladder starts here: built once (drizzle builds a query's text anew for
  // each call otherwise, 75-90 µs of the main thread for this join).
  const current = db
    .select({ ladder: ladders, config: ladderVersions.config })
    .from(ladders)
    .innerJoin(accounts, eq(accounts.id, ladders.accountId))
    .innerJoin(ladderVersions, and(eq(ladderVersions.ladderId, ladders.id), eq(ladderVersions.version, ladders.currentVersion)))
    .where(and(eq(accounts.username, sql.placeholder('author')), eq(ladders.slug, sql.placeholder('slug'))))
    .prepare('ladder_current');
  async function find(author: string, slug: string) {
    const [found] = await current.execute({ author, slug });
    return found;
  }

  return {
    /**
     * Creates the ladder (version 1) or saves a new version of it, in one transaction.
     * Only the author may save; omitted description and visibilities keep their saved values.
     */
    async save(principal: Principal, author: string, slug: string, input: SaveInput): Promise<{ metadata: LadderMetadata; created: boolean }> {
      if (principal.username !== author) throw notLadderOwner(author);
      if (!isValidSlug(slug)) {
        throw invalidRequest(
          'invalid_slug',
          `Invalid ladder slug "${slug}": use 1 to 64 lowercase letters, digits, "-" and "_", starting with a letter or digit.`,
          'ladder',
        );
      }
      if (!mayAccessLadder(principal.access, author, slug)) throw ladderNotFound(author, slug);
      const result = validateConfig(input.config);
      if (!result.valid) throw invalidLadderConfig(result.errors);
      const config = result.config;
      const description = input.description ?? config.description;
      const changes = {
        name: config.name,
        ...(description !== undefined ? { description } : {}),
        ...(input.usageVisibility ? { usageVisibility: input.usageVisibility } : {}),
        ...(input.configVisibility ? { configVisibility: input.configVisibility } : {}),
      };
      const row = await db.transaction(async (tx) => {
        // One statement creates or bumps the version, so concurrent saves get distinct versions.
        const [saved] = await tx
          .insert(ladders)
          .values({ accountId: principal.accountId, slug, currentVersion: 1, ...changes })
          .onConflictDoUpdate({
            target: [ladders.accountId, ladders.slug],
            set: { ...changes, currentVersion: sql`${ladders.currentVersion} + 1`, updatedAt: new Date() },
          })
          .returning();
        if (RANK[saved!.configVisibility] > RANK[saved!.usageVisibility]) {
          throw invalidRequest(
            'invalid_visibility',
            `config_visibility "${saved!.configVisibility}" cannot be wider than usage_visibility "${saved!.usageVisibility}".`,
            'config_visibility',
          );
        }
        await tx.insert(ladderVersions).values({ ladderId: saved!.id, version: saved!.currentVersion, config });
        return saved!;
      });
      return { metadata: metadata(row, author, config), created: row.currentVersion === 1 };
    },

    /** The ladder at its current version, if the caller and the key may see it; else ladderNotFound. */
    async getVisible(principal: Principal, author: string, slug: string): Promise<VisibleLadder> {
      if (!USERNAME_RE.test(author) || !isValidSlug(slug) || !mayAccessLadder(principal.access, author, slug)) {
        throw ladderNotFound(author, slug);
      }
      const found = await find(author, slug);
      if (!found) throw ladderNotFound(author, slug);
      const isOwner = found.ladder.accountId === principal.accountId;
      if (!isOwner && found.ladder.usageVisibility === 'private') throw ladderNotFound(author, slug);
      return { row: found.ladder, author, config: found.config as LadderConfig, isOwner };
    },

    /**
     * Metadata, of the current version or of an earlier one; `config` and `allowed_targets`
     * only for the owner or a public config.
     */
    async describe(principal: Principal, author: string, slug: string, version?: number): Promise<LadderMetadata> {
      const ladder = await this.getVisible(principal, author, slug);
      const showConfig = ladder.isOwner || ladder.row.configVisibility === 'public';
      if (version === undefined || version === ladder.row.currentVersion) {
        return metadata(ladder.row, author, showConfig ? ladder.config : null);
      }
      const [saved] = await db
        .select()
        .from(ladderVersions)
        .where(and(eq(ladderVersions.ladderId, ladder.row.id), eq(ladderVersions.version, version)));
      if (!saved) throw ladderVersionNotFound(author, slug, version, ladder.row.currentVersion);
      const config = saved.config as LadderConfig;
      // An earlier version is described as it was saved: its own name, number and time.
      const row = { ...ladder.row, name: config.name, currentVersion: saved.version, updatedAt: saved.createdAt };
      return metadata(row, author, showConfig ? config : null);
    },

    /**
     * A visible ladder as it was saved at `version`: that version's config, and `row.currentVersion`
     * set to it (what a run records as the version it ran); 404 ladder_version_not_found if never saved.
     */
    async atVersion(ladder: VisibleLadder, version: number): Promise<VisibleLadder> {
      if (version === ladder.row.currentVersion) return ladder;
      const [saved] = await db
        .select({ config: ladderVersions.config })
        .from(ladderVersions)
        .where(and(eq(ladderVersions.ladderId, ladder.row.id), eq(ladderVersions.version, version)));
      if (!saved) throw ladderVersionNotFound(ladder.author, ladder.row.slug, version, ladder.row.currentVersion);
      return { ...ladder, row: { ...ladder.row, currentVersion: version }, config: saved.config as LadderConfig };
    },

    /** The author's public ladders, and all of them when the caller is the author; the key's ACL applies. */
    async list(principal: Principal, author: string): Promise<LadderMetadata[]> {
      if (!USERNAME_RE.test(author)) return [];
      const isOwner = principal.username === author;
      const rows = await db
        .select({ ladder: ladders })
        .from(ladders)
        .innerJoin(accounts, eq(accounts.id, ladders.accountId))
        .where(and(eq(accounts.username, author), isOwner ? undefined : eq(ladders.usageVisibility, 'public')))
        .orderBy(asc(ladders.slug));
      return rows
        .filter(({ ladder }) => mayAccessLadder(principal.access, author, ladder.slug))
        .map(({ ladder }) => metadata(ladder, author, null));
    },

    /** Deletes the ladder and every version; its instances keep their author and slug. */
    async remove(principal: Principal, author: string, slug: string): Promise<void> {
      if (principal.username !== author) throw notLadderOwner(author);
      if (!isValidSlug(slug) || !mayAccessLadder(principal.access, author, slug)) throw ladderNotFound(author, slug);
      const deleted = await db
        .delete(ladders)
        .where(and(eq(ladders.accountId, principal.accountId), eq(ladders.slug, slug)))
        .returning({ id: ladders.id });
      if (deleted.length === 0) throw ladderNotFound(author, slug);
    },

  };
}

export type LadderService = ReturnType<typeof createLadderService>;

export function allowedTargetsOf(config: LadderConfig): AllowedTargets {
  return config.allowedTargets ?? { strategy: 'universal' };
}

function metadata(row: LadderRow, author: string, config: LadderConfig | null): LadderMetadata {
  return {
    id: row.id,
    author,
    slug: row.slug,
    name: row.name,
    description: row.description,
    version: row.currentVersion,
    usage_visibility: row.usageVisibility,
    config_visibility: row.configVisibility,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    ...(config ? { config: config as unknown as Record<string, unknown>, allowed_targets: allowedTargetsOf(config) } : {}),
  };
}
