// A new embedded database made at build time: initdb and the migrations cost 3-4 s of CPU inside
// PGlite, loading this image under 1 s. `npm run build` writes it to dist/pglite-image/ (the
// data directory as PGlite's `dumpDataDir` tarball, and a manifest: scripts/pglite-image.ts); the thread
// (src/db/pglite-thread.ts) creates a new data directory from it only when the manifest names
// this PGlite version and these exact migrations, and the tarball its checksum; otherwise it
// runs initdb and the migrations as before. Drizzle's own migration table is
// in the image as drizzle wrote it, and the migrations are checked at every start all the same.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export const IMAGE_TARBALL = 'pgdata.tar.gz';
export const IMAGE_MANIFEST = 'image.json';

/** What an image was made from; it is used only where both match. */
export interface ImageStamp {
  pglite: string;
  /** sha-256 of the migrations folder's SQL and journal files. */
  migrations: string;
}

export interface ImageManifest extends ImageStamp {
  /** sha-256 of the tarball. */
  sha256: string;
}

/** dist/pglite-image, beside dist/src; from the sources (tests), the build's. */
export function imageFolder(): string {
  const base = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  return path.basename(base) === 'dist' ? path.join(base, 'pglite-image') : path.join(base, 'dist', 'pglite-image');
}

export function migrationsDigest(folder: string): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(folder, { recursive: true }).map(String).sort()) {
    if (file.endsWith('.sql') || file.endsWith('.json')) hash.update(file).update(readFileSync(path.join(folder, file)));
  }
  return hash.digest('hex');
}

function pgliteVersion(): string {
  // The package's entry is dist/index.*; its package.json is not in its exports, so found beside.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const manifest = JSON.parse(readFileSync(path.resolve(path.dirname(entry), '../package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

export function currentStamp(migrationsFolder: string): ImageStamp {
  return { pglite: pgliteVersion(), migrations: migrationsDigest(migrationsFolder) };
}

export const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** The image's data directory as an uncompressed tarball, or why it cannot be used. */
export function readImage(folder: string, stamp: ImageStamp): { tar: Uint8Array } | { skipped: string } {
  if (!existsSync(path.join(folder, IMAGE_MANIFEST))) return { skipped: 'this build has none' };
  let manifest: ImageManifest;
  let tarball: Buffer;
  try {
    manifest = JSON.parse(readFileSync(path.join(folder, IMAGE_MANIFEST), 'utf8')) as ImageManifest;
    tarball = readFileSync(path.join(folder, IMAGE_TARBALL));
  } catch (error) {
    return { skipped: `unreadable (${error instanceof Error ? error.message : String(error)})` };
  }
  if (manifest.pglite !== stamp.pglite) return { skipped: `made with PGlite ${String(manifest.pglite)}, this is ${stamp.pglite}` };
  if (manifest.migrations !== stamp.migrations) return { skipped: 'made for other migrations' };
  if (sha256(tarball) !== manifest.sha256) return { skipped: 'its checksum does not match' };
  try {
    // Decompressed here: PGlite's own gzip path (a web DecompressionStream) costs 0.2 s more.
    return { tar: gunzipSync(tarball) };
  } catch (error) {
    return { skipped: `not a gzip file (${error instanceof Error ? error.message : String(error)})` };
  }
}
