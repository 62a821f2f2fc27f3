// PostgreSQL's extended-protocol messages as the embedded database's statements send and read
// them (src/db/pglite-prepared.ts): Bind, Execute and Sync written into a reused buffer, and an
// answer's rows, affected-row count, error and notifications read from its bytes. PGlite's own
// protocol classes allocate a buffer per message written and an object per message read; its
// parser is used here only for an error or a notification, where the objects are what we want.
import { protocol, type messages as wire } from '@electric-sql/pglite';
import { writeBinaryArray } from './pglite-binary-arrays.js';
import type { Bytes } from './pglite-bytes.js';

export type ColumnParser = ((text: string, type: number) => unknown) | undefined;

export interface Column {
  name: string;
  dataTypeID: number;
}

const decoder = new TextDecoder();
const BIND = 0x42, EXECUTE = 0x45, SYNC = 0x53; // frontend message codes
const DATA_ROW = 0x44, COMMAND_COMPLETE = 0x43, ERROR = 0x45, NOTIFICATION = 0x41; // backend message codes

/** PGlite's own message objects for a stretch of an answer (a prepare's, an error, a notification). */
export function messagesOf(answer: Uint8Array): wire.BackendMessage[] {
  const messages: wire.BackendMessage[] = [];
  new protocol.Parser().parse(answer, (message) => messages.push(message));
  return messages;
}

/**
 * Bind `params` to the unnamed portal of statement `name`, whose parameter types are `types`
 * (text results), Execute it whole, Sync. An array goes in binary where it has a binary form here
 * (src/db/pglite-binary-arrays.ts); any other value as the text `asText` makes of it.
 */
export function bindExecuteSync(into: Bytes, name: Uint8Array, params: unknown[], types: number[], asText: (value: unknown, type: number) => string): Uint8Array {
  into.length = 0;
  into.byte(BIND);
  const lengthAt = into.length;
  into.int32(0);
  into.byte(0);
  into.add(name);
  into.byte(0);
  // One format code per parameter, all text (0) until a parameter goes in binary.
  into.int16(params.length);
  const formatsAt = into.length;
  for (let i = 0; i < params.length; i++) into.int16(0);
  into.int16(params.length);
  for (let i = 0; i < params.length; i++) {
    const value = params[i];
    if (value === null || value === undefined) into.int32(-1);
    else if (writeBinaryArray(into, types[i]!, value)) into.view.setInt16(formatsAt + 2 * i, 1);
    else into.text(asText(value, types[i]!));
  }
  into.int16(0);
  into.view.setInt32(lengthAt, into.length - lengthAt);
  into.byte(EXECUTE);
  into.int32(9);
  into.byte(0);
  into.int32(0);
  into.byte(SYNC);
  into.int32(4);
  return into.filled();
}

/**
 * The rows (each value parsed by its column's parser), and the rows a write affected, as PGlite's
 * own results give them; an error is thrown as PGlite's own DatabaseError.
 */
export function readAnswer(
  answer: Uint8Array,
  columns: Column[],
  parsers: ColumnParser[],
  rowMode: 'object' | 'array',
  onNotification: (channel: string, payload: string) => void,
): { rows: unknown[]; affectedRows: number } {
  const view = new DataView(answer.buffer, answer.byteOffset, answer.byteLength);
  const rows: unknown[] = [];
  let affectedRows = 0;
  for (let at = 0; at < answer.length; at += 1 + view.getInt32(at + 1)) {
    const code = answer[at];
    if (code === DATA_ROW) {
      const values = dataRow(answer, view, at + 5, columns, parsers);
      rows.push(rowMode === 'array' ? values : Object.fromEntries(columns.map((column, i) => [column.name, values[i]])));
    } else if (code === COMMAND_COMPLETE) {
      affectedRows += affected(decoder.decode(answer.subarray(at + 5, at + view.getInt32(at + 1))));
    } else if (code === ERROR) {
      throw messagesOf(answer.subarray(at))[0]!;
    } else if (code === NOTIFICATION) {
      const notice = messagesOf(answer.subarray(at, at + 1 + view.getInt32(at + 1)))[0] as wire.NotificationResponseMessage;
      onNotification(notice.channel, notice.payload);
    }
  }
  return { rows, affectedRows };
}

function dataRow(answer: Uint8Array, view: DataView, at: number, columns: Column[], parsers: ColumnParser[]): unknown[] {
  const count = view.getInt16(at);
  const values = new Array<unknown>(count);
  at += 2;
  for (let i = 0; i < count; i++) {
    const length = view.getInt32(at);
    at += 4;
    if (length < 0) {
      values[i] = null;
      continue;
    }
    const text = decoder.decode(answer.subarray(at, at + length));
    at += length;
    const parser = parsers[i];
    values[i] = parser ? parser(text, columns[i]!.dataTypeID) : text;
  }
  return values;
}

/** The rows a command tag counts as written ("INSERT 0 5", "UPDATE 3"), as PGlite counts them. */
function affected(tag: string): number {
  const [command] = tag.split(' ', 1);
  if (command !== 'INSERT' && command !== 'UPDATE' && command !== 'DELETE' && command !== 'COPY' && command !== 'MERGE') return 0;
  return Number.parseInt(tag.slice(tag.lastIndexOf(' ') + 1), 10) || 0;
}
