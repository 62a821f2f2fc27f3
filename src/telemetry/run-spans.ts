// Spans of ladder runs: one per run, with its steps inside and each node's call inside its
// step (the vendor attempts in turn inside the node). A synchronous run is part of its
// request's trace; a background run starts a trace of its own in the worker that claimed it,
// linked to the span of the request that queued it, possibly in another process.
import { ROOT_CONTEXT, SpanKind, defaultTextMapGetter, trace, type Link, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { RunResult, RunTracer } from '../ladders/engine/interpreter.js';
import type { StepPlace } from '../ladders/engine/run-types.js';
import { nanosToUsd } from '../money.js';
import type { Usage } from '../providers/types.js';
import type { RunSpanInfo, RunSpans } from '../worker/execute.js';
import { GEN_AI, LADDER } from './names.js';
import type { Sdk } from './sdk.js';
import { inSpan } from './spans.js';

const propagator = new W3CTraceContextPropagator();

export function runSpans(sdk: Sdk, captureContent: boolean): RunSpans {
  const steps: RunTracer = {
    step: (place, work) => inSpan(sdk, `ladder.step ${place.stepId}`, { attributes: placeAttributes(place) }, () => work()),
    node: (place, work) =>
      inSpan(sdk, `ladder.node ${place.stepId}`, { attributes: Object.assign(placeAttributes(place), { [LADDER.node]: place.node, [LADDER.callKey]: place.key }) }, () => work()),
  };

  return {
    run(info, work) {
      const background = info.kind === 'async';
      const link = background && info.traceParent ? linkTo(info.traceParent) : null;
      const options = {
        // A background run may be claimed while a request's span is active (a notice woke the worker): never its child.
        kind: background ? SpanKind.CONSUMER : SpanKind.INTERNAL,
        root: background,
        ...(background ? { parent: ROOT_CONTEXT } : {}),
        links: link ? [link] : [],
        attributes: runAttributes(info, captureContent),
      };
      return inSpan(sdk, info.ladder ? `ladder.run ${info.ladder}` : 'ladder.run', options, async (span) => {
        try {
          const result = await work(steps);
          progress(span, result);
          if (captureContent) span.setAttribute(LADDER.answer, result.answer);
          return result;
        } catch (error) {
          // A LadderRunError carries what the run used up to its failure.
          if (typeof error === 'object' && error !== null && 'usage' in error) progress(span, error as RunResult);
          throw error;
        }
      });
    },
  };
}

function runAttributes(info: RunSpanInfo, captureContent: boolean) {
  return {
    [LADDER.instanceId]: info.instanceId,
    [LADDER.runMode]: info.kind,
    [LADDER.runAttempt]: info.attempt,
    [LADDER.runResumed]: info.resumed,
    [GEN_AI.requestModel]: info.model,
    ...(info.ladder ? { [LADDER.ladder]: info.ladder } : {}),
    ...(captureContent ? { [LADDER.input]: info.input } : {}),
  };
}

function placeAttributes(place: StepPlace): Record<string, string | number> {
  const attributes: Record<string, string | number> = { [LADDER.stepId]: place.stepId, [LADDER.pass]: place.pass, [LADDER.depth]: place.depth };
  if (place.groupId) attributes[LADDER.groupId] = place.groupId;
  return attributes;
}

function progress(span: Span, done: { usage: Usage; spendNanos: number; modelCalls: number }): void {
  span.setAttribute(GEN_AI.inputTokens, done.usage.prompt_tokens);
  span.setAttribute(GEN_AI.outputTokens, done.usage.completion_tokens);
  span.setAttribute(LADDER.costUsd, nanosToUsd(done.spendNanos));
  span.setAttribute(LADDER.modelCalls, done.modelCalls);
}

/** A link to the span a stored `traceparent` names; null when it is not a valid one. */
function linkTo(traceParent: string): Link | null {
  const context = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, { traceparent: traceParent }, defaultTextMapGetter));
  return context ? { context } : null;
}
