// "The caller left", for the routes that answer after a vendor call: a caller that hangs up
// should not keep the call (and its cost) running.
import type { ServerResponse } from 'node:http';
import { CallerGone } from '../abort-scope.js';

/** A handle aborted when `response` closes before its answer was written whole. */
export function goneWhenClosed(response: ServerResponse): CallerGone {
  const gone = new CallerGone();
  // A response closes once: `on` spares the wrapper `once` builds for every request.
  response.on('close', () => {
    if (!response.writableFinished) gone.abort();
  });
  return gone;
}
