// A small Server-Sent Events client for tests: parses the wire format and reads a live stream.
import http, { type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';

export interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  /** Comment lines (`: ...`) seen since the previous message. */
  comments: string[];
}

/** Splits SSE text into messages; a trailing incomplete message is returned as `rest`. */
export function parseSse(text: string): { messages: SseMessage[]; rest: string } {
  const blocks = text.split('\n\n');
  const rest = blocks.pop() ?? '';
  const messages = blocks.map((block) => {
    const message: SseMessage = { comments: [] };
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) message.comments.push(line.slice(1).trim());
      else {
        const [field, ...value] = line.split(':');
        const v = value.join(':').replace(/^ /, '');
        if (field === 'id') message.id = v;
        else if (field === 'event') message.event = v;
        else if (field === 'data') message.data = message.data === undefined ? v : `${message.data}\n${v}`;
      }
    }
    return message;
  });
  return { messages, rest };
}

export interface LiveStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every message received so far (comments-only ones included). */
  messages: SseMessage[];
  /** Resolves once `predicate` holds for the messages received, or rejects after `timeoutMs`. */
  until(predicate: (messages: SseMessage[]) => boolean, timeoutMs?: number): Promise<SseMessage[]>;
  /** Resolves when the server ends the stream (or close() is called). */
  ended: Promise<void>;
  /** The body, for a response that is not a stream. */
  text(): Promise<string>;
  close(): void;
}

/**
 * Opens `url` on a connection of its own (no keep-alive pool, which could leave sockets that
 * keep a closing server waiting), and reads it as SSE.
 */
export function openStream(url: string, headers: Record<string, string>): Promise<LiveStream> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: false }, (res) => {
      const messages: SseMessage[] = [];
      const listeners = new Set<() => void>();
      let raw = '';
      let buffer = '';
      let endedFlag = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        raw += chunk;
        buffer += chunk;
        const parsed = parseSse(buffer);
        buffer = parsed.rest;
        messages.push(...parsed.messages);
        listeners.forEach((l) => l());
      });
      const ended = new Promise<void>((done) => {
        const finish = () => {
          endedFlag = true;
          listeners.forEach((l) => l());
          done();
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
      });
      resolve({
        status: res.statusCode!,
        headers: res.headers,
        messages,
        ended,
        text: async () => {
          await ended;
          return raw;
        },
        close: () => request.destroy(),
        until(predicate, timeoutMs = 10_000) {
          return new Promise((resolveUntil, rejectUntil) => {
            const check = () => {
              if (predicate(messages)) {
                cleanup();
                resolveUntil(messages);
              } else if (endedFlag) {
                cleanup();
                rejectUntil(new Error(`stream ended first; got ${JSON.stringify(messages)}`));
              }
            };
            const timer = setTimeout(() => {
              cleanup();
              rejectUntil(new Error(`timed out; got ${JSON.stringify(messages)}`));
            }, timeoutMs);
            const cleanup = () => {
              clearTimeout(timer);
              listeners.delete(check);
            };
            listeners.add(check);
            check();
          });
        },
      });
    });
    request.on('error', reject);
  });
}

/** The messages that are events (not bare comments or the retry hint). */
export const eventsOf = (messages: SseMessage[]) => messages.filter((m) => m.event !== undefined);

export interface StalledClient {
  /** The start of the response: its status line and headers, perhaps some of the body. */
  head: string;
  /** Bytes received in all (the head included). */
  received(): number;
  /** Resolves when the connection closes, by the server or close(). */
  closed: Promise<void>;
  /** Reads what the server sent (as a slow client finally would). */
  resume(): void;
  close(): void;
}

/**
 * Requests `path` on a raw connection, takes the first chunk of the answer, then stops reading:
 * a client that never drains its socket. `connect` opens the socket (plain or TLS).
 */
export function openStalled(connect: () => Socket, host: string, path: string, headers: Record<string, string>): Promise<StalledClient> {
  return new Promise((resolve, reject) => {
    const socket = connect();
    let received = 0;
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('error', () => undefined);
    socket.once('error', reject);
    const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.write(`GET ${path} HTTP/1.1\r\nhost: ${host}\r\n${lines}\r\n`);
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve({
        head: chunk.toString('latin1'),
        received: () => received,
        closed,
        resume: () => socket.resume(),
        close: () => socket.destroy(),
      });
    });
  });
}
