// What a rerun runs: the source instance's model, input and knobs, with the request's changes
// over them, checked exactly as a start's body is (docs/pipelines.md, "Rerun").
import type { RequestMessage } from '../../schemas/chat-messages.js';
import { checkLadderRunRequest, toLadderMessages } from '../../schemas/ladder-run.js';
import type { RerunBody } from '../../schemas/pipelines.js';
import type { RunInput } from '../../services/ladder-runs.js';
import type { InstanceRow } from '../../services/instances.js';
import type { VisibleLadder } from '../../services/ladders.js';
import { requireUserMessage } from '../chat/completion.js';
import { checkMessages } from '../chat/messages.js';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The source's knobs that `ladder` (the version to run) still defines, with the request's over
 * them. Knobs that are not an object go through as given, for the usual 400 invalid_knobs.
 */
function knobsFor(ladder: VisibleLadder, source: InstanceRow, requested: unknown): unknown {
  if (requested !== undefined && requested !== null && !isPlainObject(requested)) return requested;
  const defined = ladder.config.knobs ?? {};
  const kept = Object.fromEntries(Object.entries(source.knobs).filter(([id]) => Object.hasOwn(defined, id)));
  return { ...kept, ...(requested ?? {}) };
}

export function rerunInput(principal: RunInput['principal'], ladder: VisibleLadder, source: InstanceRow, body: RerunBody): RunInput {
  const model = body.model ?? source.model;
  const messages: RequestMessage[] = body.messages ?? [{ role: 'user', content: source.input }];
  checkMessages(messages);
  checkLadderRunRequest({ model, messages });
  requireUserMessage(messages);
  return { principal, ladder, model, messages: toLadderMessages(messages), knobs: knobsFor(ladder, source, body.knobs) };
}
