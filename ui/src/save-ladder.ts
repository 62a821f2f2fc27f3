// Saving the playground's config as a ladder version: only when it differs from the ladder's
// current version, so "Save and run" on an unchanged config runs that version again.
import { api, ApiFailure } from './api.js';

/** JSON with members sorted at every level: the database keeps a config's members in its own order. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v);
}

/** Saves the config as the ladder's next version, unless its current version is this very config. */
export async function saveUnlessUnchanged(where: { author: string; slug: string }, config: unknown): Promise<{ version: number; saved: boolean }> {
  try {
    const { body } = await api<{ version: number; config?: unknown }>('GET', `/v1/${where.author}/${where.slug}`);
    if (body.config !== undefined && canonical(body.config) === canonical(config)) return { version: body.version, saved: false };
  } catch (failure) {
    if (!(failure instanceof ApiFailure) || failure.status !== 404) throw failure;
  }
  const { body } = await api<{ version: number }>('PUT', `/v1/${where.author}/${where.slug}`, { config });
  return { version: body.version, saved: true };
}

export const savedText = (ladder: { version: number; saved: boolean }) =>
  ladder.saved ? `Saved as version ${ladder.version}.` : `Unchanged: version ${ladder.version} is this config.`;
