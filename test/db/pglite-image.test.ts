// A new DATA_DIR's embedded database comes from the build's image (src/db/pglite-image.ts) only
// when the image was made from this PGlite version and these migrations and is intact; else
// initdb and the migrations make it, as before.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationsFolder, openDatabase, type Database } from '../../src/db/client.js';
import { currentStamp, extractImage, imageFolder, readImage, type ImageManifest } from '../../src/db/pglite-image.js';

const scratch: string[] = [];
const databases: Database[] = [];
afterEach(async () => {
  await Promise.all(databases.splice(0).map((d) => d.close()));
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const tempDir = (prefix: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
};

/** A copy of the build's image whose manifest and tarball the test may spoil. */
function imageCopy(change: (manifest: ImageManifest, folder: string) => void = () => {}): string {
  const folder = tempDir('ladder-image-');
  for (const file of ['image.json', 'pgdata.tar.gz']) copyFileSync(path.join(imageFolder(), file), path.join(folder, file));
  const manifest = JSON.parse(readFileSync(path.join(folder, 'image.json'), 'utf8')) as ImageManifest;
  change(manifest, folder);
  writeFileSync(path.join(folder, 'image.json'), JSON.stringify(manifest));
  return folder;
}

async function open(image?: string | null): Promise<Database> {
  const database = await openDatabase({ url: null, dataDir: tempDir('ladder-data-'), ...(image === undefined ? {} : { pgliteImage: image }) });
  databases.push(database);
  return database;
}

/** Drizzle's record of the applied migrations, as its migrator compares them with the folder. */
const applied = (database: Database) =>
  database.query<{ hash: string; created_at: string }>('select hash, created_at::text from drizzle.__drizzle_migrations order by id');
const expected = () => readMigrationFiles({ migrationsFolder: migrationsFolder() }).map((m) => ({ hash: m.hash, created_at: String(m.folderMillis) }));

describe.skipIf(process.env.TEST_DATABASE_URL)('the embedded database image', () => {
  it('the build has one for this PGlite version and these migrations', () => {
    expect('tar' in readImage(imageFolder(), currentStamp(migrationsFolder())), 'run `npm run build` first').toBe(true);
  });

  it('makes a new DATA_DIR migrated exactly as drizzle records it', async () => {
    const database = await open();
    expect(database.created).toEqual({ from: 'image' });
    expect(await applied(database)).toEqual(expected());
    // The `postgres` database alone: the templates are left out of the image (scripts/pglite-image.ts).
    expect(await database.query('select datname from pg_database')).toEqual([{ datname: 'postgres' }]);
    // A working database: a write and a read through the thread.
    await database.query('create table image_check (n int)');
    await database.query('insert into image_check values (1)');
    expect(await database.query('select n from image_check')).toEqual([{ n: 1 }]);
  });

  it('is not used for an existing DATA_DIR', async () => {
    const dataDir = tempDir('ladder-data-');
    databases.push(await openDatabase({ url: null, dataDir }));
    await databases.pop()!.close();
    const again = await openDatabase({ url: null, dataDir });
    databases.push(again);
    expect(again.created).toBeNull();
  });

  it('is ignored when made in another image format, with another PGlite version, for other migrations, or when corrupt (its checksum differs)', () => {
    const stamp = currentStamp(migrationsFolder());
    expect(readImage(imageCopy((m) => (m.format = 1)), stamp)).toEqual({ skipped: `made in image format 1, this build reads ${stamp.format}` });
    expect(readImage(imageCopy((m) => (m.pglite = '0.0.1')), stamp)).toEqual({ skipped: `made with PGlite 0.0.1, this is ${stamp.pglite}` });
    expect(readImage(imageCopy((m) => (m.migrations = 'f'.repeat(64))), stamp)).toEqual({ skipped: 'made for other migrations' });
    expect(readImage(imageCopy((m) => (m.sha256 = '0'.repeat(64))), stamp)).toEqual({ skipped: 'its checksum does not match' });
    const truncated = imageCopy((_, folder) => truncateSync(path.join(folder, 'pgdata.tar.gz'), 1000));
    expect(readImage(truncated, stamp)).toEqual({ skipped: 'its checksum does not match' });
    expect(readImage(tempDir('ladder-no-image-'), stamp)).toEqual({ skipped: 'this build has none' });
  });

  it('of another version leaves the new DATA_DIR to initdb and the migrations', async () => {
    const database = await open(imageCopy((m) => (m.pglite = '0.0.1')));
    expect(database.created).toEqual({ from: 'initdb', imageSkipped: expect.stringMatching(/^made with PGlite 0\.0\.1/) as unknown });
    expect(await applied(database)).toEqual(expected());
  }, 120_000);

  it('that breaks off while being written out leaves the data directory empty', () => {
    const image = readImage(imageFolder(), currentStamp(migrationsFolder()));
    if (!('tar' in image)) throw new Error(image.skipped);
    const dir = path.join(tempDir('ladder-extract-'), 'pgdata');
    mkdirSync(dir);
    // Cut inside the WAL segment (16 MiB, the fourth entry): the folders before it are written, then it fails.
    expect(() => extractImage(image.tar.subarray(0, 4 * 1024 * 1024), dir)).toThrow(/^truncated image entry: /);
    expect(readdirSync(dir)).toEqual([]);
    expect(existsSync(`${dir}.image-${process.pid}`)).toBe(false);
  });
});
