// PGlite is a single-process database: two processes opening the same files would corrupt
// them. A lock file holding the owner's pid makes the second opener fail with a clear message.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function lockEmbeddedDatabase(dataDir: string): () => void {
  const file = path.join(dataDir, 'embedded-db.lock');
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(readFileSync(file, 'utf8'));
    if (owner !== process.pid && isAlive(owner)) {
      throw new Error(
        `The embedded database in ${dataDir} is in use by process ${owner}. Stop that process, or use the running server's admin API instead.`,
      );
    }
    // A lock left by a process that died (or by this one, reopening): take it over.
    rmSync(file, { force: true });
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
