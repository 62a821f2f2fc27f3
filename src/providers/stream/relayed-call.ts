// A model call made as a stream whose text goes to a sink as it arrives, resolving with the
// whole result as an ordinary call does: how a ladder run relays its answer's last call live
// while that call is still checkpointed, metered and traced like every other.
import { streamedUsage } from '../../usage/stream-metering.js';
import { ProviderRouteError } from '../route-errors.js';
import type { ChatResult, DeltaSink, FinishReason } from '../types.js';
import { VendorError } from '../vendor-errors.js';
import type { RoutedStream } from './routed-stream.js';

/**
 * Reads `routed` to its end, handing each piece of the first choice's text to `onDelta` and
 * awaiting it before the next read (backpressure). A vendor failing mid-stream rejects with a
 * 502 upstream error naming the cut, as a whole call's failure would; the connection is closed
 * however the read ends. `promptEstimate` prices the prompt when the vendor reports no usage.
 */
export async function relayedCall(routed: RoutedStream, onDelta: DeltaSink, promptEstimate: number): Promise<ChatResult> {
  const { stream } = routed;
  let content = '';
  let finishReason: FinishReason = 'stop';
  try {
    for (let chunk = await stream.read(); chunk !== null; chunk = await stream.read()) {
      // A ladder's call asks for one choice: its text is the node's output.
      const choice = chunk.choices.find((c) => c.index === 0);
      if (!choice) continue;
      if (choice.finish_reason) finishReason = choice.finish_reason;
      const text = choice.delta.content;
      if (typeof text !== 'string' || text === '') continue;
      content += text;
      await onDelta(text);
    }
  } catch (error) {
    throw cutError(error, routed.attempts, routed.upstreamMs);
  } finally {
    stream.cancel();
  }
  return {
    content,
    finishReason,
    usage: streamedUsage(stream.usage(), stream.completed, stream.chars, promptEstimate),
    model: routed.model,
    provider: routed.provider,
    attempts: routed.attempts,
    upstreamMs: routed.upstreamMs,
  };
}

function cutError(error: unknown, attempts: RoutedStream['attempts'], upstreamMs: number): unknown {
  // An abort is the run's own doing (its client left, its wall time ran out): the run reports that instead.
  if (!(error instanceof VendorError) || error.kind === 'abort') return error;
  const code = error.kind === 'timeout' ? 'stream_timeout' : error.kind === 'server' ? 'upstream_stream_error' : 'upstream_stream_interrupted';
  return new ProviderRouteError(502, 'upstream_error', code, `The stream was cut before the answer was complete: ${error.message}.`, attempts, upstreamMs);
}
