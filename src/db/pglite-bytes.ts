// The byte buffer the embedded database's statements are written into (src/db/pglite-wire.ts,
// src/db/pglite-binary-arrays.ts) and their answers gathered in, reused from one to the next.
const encoder = new TextEncoder();

/** Kept between statements; a buffer grown past this for one large statement is let go after it. */
const KEPT_BYTES = 64 * 1024;

/** A byte buffer grown as needed and reused from one statement to the next. */
export class Bytes {
  bytes = new Uint8Array(4096);
  view = new DataView(this.bytes.buffer);
  length = 0;

  /** Empties it, and lets go of the memory of a large statement rather than hold it for the thread's life. */
  clear(): void {
    this.length = 0;
    if (this.bytes.length <= KEPT_BYTES) return;
    this.bytes = new Uint8Array(4096);
    this.view = new DataView(this.bytes.buffer);
  }

  ensure(more: number): void {
    if (this.length + more <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + more));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }
  byte(value: number): void {
    this.ensure(1);
    this.bytes[this.length++] = value;
  }
  int16(value: number): void {
    this.ensure(2);
    this.view.setInt16(this.length, value);
    this.length += 2;
  }
  int32(value: number): void {
    this.ensure(4);
    this.view.setInt32(this.length, value);
    this.length += 4;
  }
  add(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }
  /** A length-prefixed UTF-8 value, as Bind carries parameters. */
  text(value: string): void {
    this.ensure(4 + value.length * 3);
    const { written } = encoder.encodeInto(value, this.bytes.subarray(this.length + 4));
    this.view.setInt32(this.length, written);
    this.length += 4 + written;
  }
  filled(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }
}
