// PGlite is a single-process database: two processes opening the same files would corrupt
// them. A lock file naming its owner makes the second opener fail with a clear message, and
// lets a process that finds the lock of a dead owner (a crash, a SIGKILL) take it over.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The owner a lock file names: its pid, and on Linux when that process started. */
interface LockOwner {
  pid: number;
  /** Start time in clock ticks since boot (/proc/<pid>/stat); tells a reused pid apart. */
  started: string | null;
}

export function lockEmbeddedDatabase(dataDir: string): () => void {
  const file = path.join(dataDir, 'embedded-db.lock');
  const self: LockOwner = { pid: process.pid, started: startTime(process.pid) };
  for (;;) {
    try {
      writeFileSync(file, formatOwner(self), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = lockHolder(file);
    if (holder !== null) {
      throw new Error(
        `The embedded database in ${dataDir} is in use by process ${holder}. Stop that process, or use the running server's admin API instead.`,
      );
    }
    // A lock left by a process that died (or by this one, reopening): take it over.
    rmSync(file, { force: true });
  }
}

/**
 * The pid of another live process holding the embedded database in `dataDir`, or null when it
 * is free (no lock, or a dead owner's). Reads only: the CLI asks this to choose between the
 * database and the running server's admin API.
 */
export function embeddedLockHolder(dataDir: string): number | null {
  return lockHolder(path.join(dataDir, 'embedded-db.lock'));
}

function lockHolder(file: string): number | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const owner = parseOwner(text);
  return owner.pid !== process.pid && isRunning(owner) ? owner.pid : null;
}

// "<pid> <start time>", or a bare pid as older versions wrote it.
const formatOwner = (owner: LockOwner) => (owner.started === null ? String(owner.pid) : `${owner.pid} ${owner.started}`);

function parseOwner(text: string): LockOwner {
  const [pid, started] = text.trim().split(/\s+/);
  return { pid: Number(pid), started: started || null };
}

/**
 * Whether the lock's owner still runs. A pid alone is not enough: after a crash and a restart
 * (a container's, a machine's) another process may have been given the dead owner's pid, and
 * it would keep the database locked forever. Where the start time is known on both sides, a
 * different one means the pid was reused.
 */
function isRunning(owner: LockOwner): boolean {
  if (!isAlive(owner.pid)) return false;
  const started = owner.started === null ? null : startTime(owner.pid);
  return started === null || started === owner.started;
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

/** A process's start time from /proc (Linux); null where there is no /proc or no such process. */
export function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): starttime is the 22nd field.
    const value = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return value && /^\d+$/.test(value) ? value : null;
  } catch {
    return null;
  }
}
