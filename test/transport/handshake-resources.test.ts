// The attack, for real: a spawned server under a small descriptor limit, and more
// half-open TLS handshakes (0x16, then silence) than it has descriptors. Before the fix they
// stayed open for ever, the process ran out of descriptors and /healthz failed; now at most
// MAX_HANDSHAKING_CONNECTIONS are held, the oldest dropped first, and /healthz keeps answering.
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, spawnServer, type SpawnedServer } from '../helpers/spawned-server.js';

const MAX_OPEN_FILES = 256;
const MAX_HANDSHAKING = 64;
const ATTACKERS = 400;

const openDescriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

/** The count once the process has opened what it opens after start (database pool connections, the ledger's and the worker's first rounds): unchanged for a second. */
async function settledDescriptors(pid: number): Promise<number> {
  let count = openDescriptors(pid);
  for (let steady = 0, waited = 0; steady < 1000 && waited < 15_000; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = openDescriptors(pid);
    steady = now === count ? steady + 100 : 0;
    count = now;
  }
  return count;
}

describe.skipIf(process.platform !== 'linux')('half-open handshakes against a descriptor limit', () => {
  let server: SpawnedServer;
  const attackers: net.Socket[] = [];
  beforeAll(async () => {
    server = await spawnServer(
      { LOG_LEVEL: 'info', MAX_HANDSHAKING_CONNECTIONS: String(MAX_HANDSHAKING), TLS_HANDSHAKE_TIMEOUT_MS: '60000' },
      { maxOpenFiles: MAX_OPEN_FILES },
    );
    await server.url();
  }, 60_000);
  afterAll(async () => {
    for (const socket of attackers) socket.destroy();
    await server?.stop();
  });

  it(`holds at most ${MAX_HANDSHAKING} of ${ATTACKERS} silent handshakes and keeps answering /healthz`, async () => {
    const port = Number(new URL(await server.url()).port);
    const pid = server.child.pid!;
    const before = await settledDescriptors(pid);
    let closedByServer = 0;
    for (let i = 0; i < ATTACKERS; i++) {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(Buffer.from([0x16])));
      socket.on('error', () => {});
      socket.on('close', () => closedByServer++);
      attackers.push(socket);
      // Let the server accept as we go, as a real flood would be spread over time.
      if (i % 50 === 49) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Every connection beyond the bound pushed out an older one.
    for (let waited = 0; closedByServer < ATTACKERS - MAX_HANDSHAKING && waited < 10_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(closedByServer).toBe(ATTACKERS - MAX_HANDSHAKING);
    // Give or take the few the process opens on its own meanwhile (the database, timers).
    expect(openDescriptors(pid) - before).toBeLessThanOrEqual(MAX_HANDSHAKING + 8);
    const health = await getJson(server, '/healthz', {});
    expect(health).toEqual({ status: 200, body: { status: 'ok' } });
    expect(server.output()).not.toMatch(/EMFILE/);
  }, 60_000);
});
