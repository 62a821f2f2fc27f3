// A new embedded database made at build time: initdb and the migrations cost 3-4 s of CPU inside
// PGlite, loading this image under 1 s. `npm run build` writes it to dist/pglite-image/ (the data
// directory as PGlite's `dumpDataDir` tarball, and a manifest: scripts/pglite-image.ts); the
// thread (src/db/pglite-thread.ts) creates a new data directory from it only when the manifest
// names this image format, this PGlite version and these exact migrations, and the tarball its
// checksum; otherwise it runs initdb and the migrations as before. Drizzle's own migration table
// is in the image as drizzle wrote it, and the migrations are checked at every start all the same.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export const IMAGE_TARBALL = 'pgdata.tar.gz';
export const IMAGE_MANIFEST = 'image.json';

/**
 * What the image holds, raised when scripts/pglite-image.ts changes it. 2: the `postgres`
 * database alone, without the template databases.
 */
const IMAGE_FORMAT = 2;

/** What an image was made from; it is used only where every field matches. */
export interface ImageStamp {
  format: number;
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
  return { format: IMAGE_FORMAT, pglite: pgliteVersion(), migrations: migrationsDigest(migrationsFolder) };
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
  if (manifest.format !== stamp.format) return { skipped: `made in image format ${String(manifest.format ?? 1)}, this build reads ${stamp.format}` };
  if (manifest.pglite !== stamp.pglite) return { skipped: `made with PGlite ${String(manifest.pglite)}, this is ${stamp.pglite}` };
  if (manifest.migrations !== stamp.migrations) return { skipped: 'made for other migrations' };
  if (sha256(tarball) !== manifest.sha256) return { skipped: 'its checksum does not match' };
  try {
    return { tar: gunzipSync(tarball) };
  } catch (error) {
    return { skipped: `not a gzip file (${error instanceof Error ? error.message : String(error)})` };
  }
}

/**
 * Writes the image's files into the empty folder `dir`, owner-only. Extracted beside it and
 * renamed into place, so that a failure leaves `dir` empty, never half a database. Done here
 * rather than by PGlite's `loadDataDir` (a tar reader in JavaScript writing through the
 * WebAssembly file system): 0.1-0.4 s of CPU against 0.5-0.8 s.
 */
export function extractImage(tar: Uint8Array, dir: string): void {
  const staging = `${dir}.image-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { mode: 0o700 });
  try {
    for (const entry of tarEntries(tar)) {
      const target = path.join(staging, entry.name);
      if (!target.startsWith(staging + path.sep)) throw new Error(`image entry outside the data directory: ${entry.name}`);
      if (entry.data === null) mkdirSync(target, { recursive: true, mode: 0o700 });
      else writeFileSync(target, entry.data, { mode: 0o600 });
    }
    rmdirSync(dir);
    renameSync(staging, dir);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

/** The entries of a ustar archive as `dumpDataDir` writes them: folders (data null) and files. */
function* tarEntries(tar: Uint8Array): Generator<{ name: string; data: Uint8Array | null }> {
  const text = (from: number, to: number) => {
    const field = tar.subarray(from, to);
    const end = field.indexOf(0);
    return Buffer.from(end < 0 ? field : field.subarray(0, end)).toString('utf8');
  };
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0; ) {
    const name = text(at + 345, at + 500) + text(at, at + 100);
    const size = parseInt(text(at + 124, at + 136).trim() || '0', 8);
    const type = String.fromCharCode(tar[at + 156]!);
    if (!Number.isFinite(size) || at + 512 + size > tar.length) throw new Error(`truncated image entry: ${name}`);
    if (type === '5') yield { name, data: null };
    else if (type === '0' || type === '\0') yield { name, data: tar.subarray(at + 512, at + 512 + size) };
    else throw new Error(`unexpected image entry type ${JSON.stringify(type)}: ${name}`);
    at += 512 + Math.ceil(size / 512) * 512;
  }
}
