// The embedded database's lock file: a live owner keeps it, a dead one (or one whose pid was
// given to another process since) loses it to the next opener.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { lockEmbeddedDatabase, startTime } from '../../src/db/embedded-lock.js';

const hasProc = existsSync('/proc/self/stat');

describe('embedded database lock', () => {
  let dataDir: string;
  let lockFile: string;
  let other: ChildProcess;
  beforeAll(() => {
    // Another live process, standing for a second server (or whoever now has a dead server's pid).
    other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  });
  afterAll(() => {
    other.kill('SIGKILL');
  });
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-lock-'));
    lockFile = path.join(dataDir, 'embedded-db.lock');
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('writes its pid and start time, and removes the file on release', () => {
    const release = lockEmbeddedDatabase(dataDir);
    const expected = hasProc ? `${process.pid} ${startTime(process.pid)}` : String(process.pid);
    expect(readFileSync(lockFile, 'utf8')).toBe(expected);
    release();
    expect(existsSync(lockFile)).toBe(false);
  });

  it('refuses a database locked by a live process, naming it, and leaves its lock alone', () => {
    const owner = hasProc ? `${other.pid} ${startTime(other.pid!)}` : String(other.pid);
    writeFileSync(lockFile, owner);
    expect(() => lockEmbeddedDatabase(dataDir)).toThrow(
      `The embedded database in ${dataDir} is in use by process ${other.pid}. Stop that process, or use the running server's admin API instead.`,
    );
    expect(readFileSync(lockFile, 'utf8')).toBe(owner);
  });

  it('still honours a bare pid, as earlier versions wrote it', () => {
    writeFileSync(lockFile, `${other.pid}\n`);
    expect(() => lockEmbeddedDatabase(dataDir)).toThrow(`in use by process ${other.pid}`);
  });

  it('takes over the lock of a process that has exited', async () => {
    const gone = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await once(gone, 'exit');
    writeFileSync(lockFile, `${gone.pid} 12345`);
    const release = lockEmbeddedDatabase(dataDir);
    expect(readFileSync(lockFile, 'utf8').split(' ')[0]).toBe(String(process.pid));
    release();
  });

  it.skipIf(!hasProc)('takes over when the pid now belongs to a process started after the lock was written', () => {
    // The owner died and its pid went to `other`: same pid, a different start time.
    const started = Number(startTime(other.pid!));
    writeFileSync(lockFile, `${other.pid} ${started - 1}`);
    const release = lockEmbeddedDatabase(dataDir);
    expect(readFileSync(lockFile, 'utf8')).toBe(`${process.pid} ${startTime(process.pid)}`);
    release();
  });

  it('takes over a lock file that names no process', () => {
    writeFileSync(lockFile, 'garbage');
    const release = lockEmbeddedDatabase(dataDir);
    expect(readFileSync(lockFile, 'utf8').split(' ')[0]).toBe(String(process.pid));
    release();
  });
});
