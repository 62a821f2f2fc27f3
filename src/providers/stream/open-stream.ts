// Opening one vendor stream: the request, the status check and the read up to the first chunk,
// all within the first-byte limit. Any failure in that window is an ordinary VendorError,
// so the router falls back exactly as for a whole answer.
import type { VendorCall } from '../call-vendor.js';
import { failedStatus, fromSocketError } from '../call-vendor.js';
import { parsedHeaders, rawHeader } from '../collect-body.js';
import { transportError, VendorError } from '../vendor-errors.js';
import { VendorBody } from './vendor-body.js';
import { StreamGuard, type StreamLimits } from './stream-guard.js';
import { VendorStream } from './vendor-stream.js';

export interface StreamCall extends VendorCall {
  limits: StreamLimits;
}

export interface OpenedVendorStream {
  stream: VendorStream;
  status: number;
  requestId: string | null;
}

/** `call.signal` (the caller's) stops the stream at any time; `call.deadline` (the router's) bounds only its opening. */
export async function openVendorStream(call: StreamCall): Promise<OpenedVendorStream> {
  const { adapter, provider, target, limits } = call;
  const support = adapter.stream;
  if (!support) throw transportError(provider, 'bad_response', 'streaming is not supported');
  if (call.signal?.aborted) throw transportError(provider, 'abort', 'request aborted by the caller');
  const guard = new StreamGuard(limits, call.signal, call.deadline);
  try {
    const body = new VendorBody(target.dispatcher, {
      origin: target.origin,
      path: support.path ? support.path(target.basePath, call.vendorModel) : adapter.path(target.basePath, call.vendorModel),
      method: 'POST',
      headers: call.headers ? { ...adapter.headers(call.apiKey), ...call.headers } : adapter.headers(call.apiKey),
      body: call.body,
      headersTimeout: limits.firstByteMs,
      bodyTimeout: limits.idleMs,
    }, guard.stop);
    await body.head;
    const requestId = rawHeader(body.rawHeaders, adapter.requestIdHeader) ?? null;
    const status = body.status;
    if (status < 200 || status >= 300) throw await failedStatus(call, { statusCode: status, headers: parsedHeaders(body.rawHeaders), body }, requestId);
    const stream = new VendorStream({ provider, body, reader: support.reader(call.request), guard, maxEventChars: limits.maxEventChars, opaque: target.opaque, apiKey: call.apiKey });
    await stream.open();
    return { stream, status, requestId };
  } catch (error) {
    guard.end();
    if (error instanceof VendorError) throw error;
    if (guard.stop.aborted) throw guard.error(provider);
    throw fromSocketError(provider, error, target.opaque, call.maxResponseBytes);
  }
}
