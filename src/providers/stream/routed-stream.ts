import type { Attempt } from '../types.js';
import type { VendorStream } from './vendor-stream.js';

/** A stream the router opened: the answering connection's, with what was tried before it. */
export interface RoutedStream {
  stream: VendorStream;
  /** The vendor model asked for (a stream names no other until its chunks do). */
  model: string;
  provider: string;
  attempts: Attempt[];
  /** Milliseconds spent waiting on vendors up to the first chunk. */
  upstreamMs: number;
}
