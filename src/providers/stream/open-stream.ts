// Opening one vendor stream: the request, the status check and the read up to the first chunk,
// all within the first-byte limit. Any failure in that window is an ordinary VendorError,
// so the router falls back exactly as for a whole answer.
import { realSignal } from '../../abort-scope.js';
import type { VendorCall } from '../call-vendor.js';
import { failedStatus, fromSocketError } from '../call-vendor.js';
import { parsedHeaders, rawHeader } from '../collect-body.js';
import { transportError, VendorError } from '../vendor-errors.js';
import { VendorBody } from './vendor-body.js';
import { FIRST_BYTE, VendorStream, type StreamLimits } from './vendor-stream.js';

export interface StreamCall extends VendorCall {
  limits: StreamLimits;
  /** The caller's signal for the stream's whole life (`signal` bounds only the opening: it carries the fallback deadline). */
  lifetime?: AbortSignal | undefined;
}

export interface OpenedVendorStream {
  stream: VendorStream;
  status: number;
  requestId: string | null;
}

export async function openVendorStream(call: StreamCall): Promise<OpenedVendorStream> {
  const { adapter, provider, target, limits } = call;
  const support = adapter.stream;
  if (!support) throw transportError(provider, 'bad_response', 'streaming is not supported');
  if (call.signal?.aborted || call.lifetime?.aborted) throw transportError(provider, 'abort', 'request aborted by the caller');
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  const release = () => call.lifetime?.removeEventListener('abort', onAbort);
  const signal = realSignal(call.signal);
  signal?.addEventListener('abort', onAbort, { once: true });
  call.lifetime?.addEventListener('abort', onAbort, { once: true });
  let stream: VendorStream | null = null;
  const firstByte = setTimeout(() => controller.abort(FIRST_BYTE), limits.firstByteMs);
  try {
    const body = new VendorBody(target.dispatcher, {
      origin: target.origin,
      path: support.path ? support.path(target.basePath, call.vendorModel) : adapter.path(target.basePath, call.vendorModel),
      method: 'POST',
      headers: call.headers ? { ...adapter.headers(call.apiKey), ...call.headers } : adapter.headers(call.apiKey),
      body: call.body,
      headersTimeout: limits.firstByteMs,
      bodyTimeout: limits.idleMs,
    }, controller.signal);
    await body.head;
    const requestId = rawHeader(body.rawHeaders, adapter.requestIdHeader) ?? null;
    const status = body.status;
    if (status < 200 || status >= 300) throw await failedStatus(call, { statusCode: status, headers: parsedHeaders(body.rawHeaders), body }, requestId);
    stream = new VendorStream({ provider, body, reader: support.reader(call.request), controller, limits, opaque: target.opaque, apiKey: call.apiKey, release });
    await stream.open();
    return { stream, status, requestId };
  } catch (error) {
    release();
    if (error instanceof VendorError) throw error;
    if (controller.signal.aborted) {
      if (controller.signal.reason === FIRST_BYTE) throw transportError(provider, 'timeout', `no stream event within ${limits.firstByteMs} ms`);
      throw transportError(provider, 'abort', 'request aborted by the caller');
    }
    throw fromSocketError(provider, error, target.opaque, call.maxResponseBytes);
  } finally {
    clearTimeout(firstByte);
    signal?.removeEventListener('abort', onAbort);
  }
}
