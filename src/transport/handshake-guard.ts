// Bounds the connections that have not finished their TLS handshake. Node's HTTP server only
// watches a connection (headersTimeout) once the handshake is done, so without this a client
// that sends 0x16, or half a ClientHello, and then nothing, holds a descriptor for ever.
import type { Socket } from 'node:net';

export interface HandshakeLimits {
  /** From accepting the connection to a finished handshake, however the bytes trickle in. */
  timeoutMs: number;
  /** Connections still handshaking at once; one more drops the oldest of them. */
  maxPending: number;
}

export interface HandshakeGuard {
  /** A connection was accepted: its deadline starts now. */
  admit(socket: Socket): void;
  /** The connection (the raw socket, or the TLS socket over it) is through its handshake. */
  release(socket: Socket): void;
  /** Connections still handshaking. */
  readonly pending: number;
  /** Drops every connection still handshaking (shutdown). */
  destroyAll(): void;
}

// The TLS socket is a different object from the raw one it wraps, but has the same peer.
const peerOf = (socket: Socket) => `${socket.remoteAddress}|${socket.remotePort}`;

export function createHandshakeGuard(limits: HandshakeLimits): HandshakeGuard {
  // Insertion order is admission order: the first entry is the oldest.
  const pending = new Map<string, { socket: Socket; timer: NodeJS.Timeout }>();

  const forget = (key: string, socket?: Socket) => {
    const entry = pending.get(key);
    if (!entry || (socket && entry.socket !== socket)) return;
    clearTimeout(entry.timer);
    pending.delete(key);
  };

  return {
    admit(socket) {
      // A socket closed before we saw it has no peer; it holds nothing.
      if (socket.remotePort === undefined) {
        socket.destroy();
        return;
      }
      const key = peerOf(socket);
      // Evicting the oldest rather than refusing the newest: an attacker's silent connections
      // age out first, while a real client's handshake takes milliseconds.
      while (pending.size >= limits.maxPending) {
        const [oldestKey, oldest] = pending.entries().next().value!;
        forget(oldestKey);
        oldest.socket.destroy();
      }
      // A deadline, not an idle timer: trickling one byte at a time does not extend it.
      const timer = setTimeout(() => {
        forget(key, socket);
        socket.destroy();
      }, limits.timeoutMs);
      timer.unref();
      pending.set(key, { socket, timer });
      socket.once('close', () => forget(key, socket));
    },
    release(socket) {
      forget(peerOf(socket));
    },
    get pending() {
      return pending.size;
    },
    destroyAll() {
      for (const [key, { socket }] of [...pending]) {
        forget(key);
        socket.destroy();
      }
    },
  };
}
