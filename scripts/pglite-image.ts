// `npm run build` runs this after compiling: the embedded database a new DATA_DIR starts from
// (src/db/pglite-image.ts), made by initdb and the migrations in an in-memory PGlite, written to
// dist/pglite-image/ or the folder given. Does nothing while the image there is one the service
// would use (src/db/pglite-image.ts's readImage: its format, PGlite version, migrations, checksum).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { migrationsFolder } from '../src/db/client.js';
import { currentStamp, IMAGE_MANIFEST, IMAGE_TARBALL, imageFolder, readImage, sha256, type ImageManifest } from '../src/db/pglite-image.js';

async function writeImage(folder: string, migrations: string): Promise<boolean> {
  const stamp = currentStamp(migrations);
  // Kept only if the service would use it: the same checks, so a corrupt or truncated one is made again too.
  if ('tar' in readImage(folder, stamp)) return false;
  const client = new PGlite();
  try {
    await migrate(drizzle(client), { migrationsFolder: migrations });
    // The service uses the `postgres` database alone and never creates another, so the two
    // templates initdb makes (about 300 files each) are left out: a new DATA_DIR is written out
    // file by file, and on some disks creating a file costs a millisecond (docs/performance.md).
    for (const template of ['template0', 'template1']) {
      await client.exec(`ALTER DATABASE ${template} IS_TEMPLATE false`);
      await client.exec(`DROP DATABASE ${template}`); // alone: it may not run inside a transaction
    }
    // Written out now, so that the image's WAL holds nothing to replay.
    await client.exec('CHECKPOINT');
    const tar = new Uint8Array(await (await client.dumpDataDir('none')).arrayBuffer());
    const tarball = gzipSync(tar, { level: 9 });
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, IMAGE_TARBALL), tarball);
    // The manifest last: until it is written, the old one's checksum refuses the new tarball.
    writeFileSync(path.join(folder, IMAGE_MANIFEST), `${JSON.stringify({ ...stamp, sha256: sha256(tarball) } satisfies ImageManifest, null, 2)}\n`);
  } finally {
    await client.close();
  }
  return true;
}

const folder = path.resolve(process.argv[2] ?? imageFolder());
if (await writeImage(folder, migrationsFolder())) console.log(`embedded database image written to ${path.relative(process.cwd(), folder)}`);
