// A deterministic in-process ModelCall for interpreter tests: it records every prompt and
// answers through a script. Token counts are character counts, so usage and spend are exact.
import { realSignal, type CallerSignal } from '../../../src/abort-scope.js';
import type { LadderConfig } from '../../../src/ladders/language/config.js';
import { runLadder } from '../../../src/ladders/engine/interpreter.js';
import { resolveKnobs } from '../../../src/ladders/engine/knobs.js';
import { createPriceTable } from '../../../src/pricing/prices.js';
import type { RunJournal, RunLimits, RunResult } from '../../../src/ladders/engine/run-types.js';
import type { ChatRequest, ChatResult, ModelCall } from '../../../src/providers/types.js';

export interface Received {
  prompt: string;
  /** Set once the script has answered. */
  output?: string;
  model: string;
  /** The max_tokens the run sent. */
  maxTokens: number | undefined;
  signal: CallerSignal | undefined;
}

export type Script = (prompt: string, index: number, signal: AbortSignal | undefined) => string | Promise<string>;

export interface FakeModel {
  call: ModelCall;
  received: Received[];
  prompts: () => string[];
}

export function fakeModel(script: Script = (prompt) => `echo(${prompt.length})`): FakeModel {
  const received: Received[] = [];
  const call: ModelCall = async (request: ChatRequest, signal?: CallerSignal): Promise<ChatResult> => {
    const [message, ...rest] = request.messages;
    if (!message || rest.length > 0 || message.role !== 'user' || typeof message.content !== 'string') {
      throw new Error('expected exactly one user message with string content');
    }
    const prompt = message.content;
    const entry: Received = { prompt, model: request.model, maxTokens: request.max_tokens, signal };
    received.push(entry);
    // A script gets a real AbortSignal, as a vendor call's transport does (realSignal).
    const content = await script(prompt, received.length - 1, realSignal(signal));
    entry.output = content;
    return {
      content,
      finishReason: 'stop',
      usage: { prompt_tokens: prompt.length, completion_tokens: content.length, total_tokens: prompt.length + content.length },
      provider: 'fake',
      attempts: [],
      upstreamMs: 0,
    };
  };
  return { call, received, prompts: () => received.map((r) => r.prompt) };
}

/** The system prompt of a prompt: the tests use it to tell steps apart. */
export function systemOf(prompt: string): string {
  return prompt.split('[System Instruction]\n')[1] ?? '';
}

export const testModel = 'test-model';
/** $1 per million prompt characters, $2 per million completion characters. */
export const testPrices = createPriceTable({ models: { [testModel]: { input: 1, output: 2 }, 'pricey-model': { input: 1000, output: 1000 } } });

export const testLimits: RunLimits = {
  maxNodesPerStep: 10,
  maxModelCallsPerRun: 100,
  maxRecursionDepth: 10,
  maxRunMs: 5000,
  maxConcurrentCalls: 4,
  maxSpendNanos: 1_000_000_000,
};

export interface RunArgs {
  config: LadderConfig;
  model?: FakeModel;
  input?: string;
  knobs?: unknown;
  limits?: Partial<RunLimits>;
  modelName?: string;
  signal?: AbortSignal;
  journal?: RunJournal;
}

export function run(args: RunArgs): Promise<RunResult> {
  return runLadder({
    config: args.config,
    model: args.modelName ?? testModel,
    input: args.input ?? 'INPUT',
    knobs: resolveKnobs(args.config, args.knobs),
    call: (args.model ?? fakeModel()).call,
    limits: { ...testLimits, ...args.limits },
    prices: testPrices,
    ...(args.signal ? { signal: args.signal } : {}),
    ...(args.journal ? { journal: args.journal } : {}),
  });
}

/** The usage and test-model spend the fake's answered calls add up to. */
export function accountingOf(model: FakeModel) {
  const answered = model.received.filter((r) => r.output !== undefined);
  const prompt = answered.reduce((sum, r) => sum + r.prompt.length, 0);
  const completion = answered.reduce((sum, r) => sum + (r.output ?? '').length, 0);
  return {
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    // $1 and $2 per million are 1,000 and 2,000 nanos a token: whole nanos, no rounding.
    spendNanos: prompt * 1000 + completion * 2000,
  };
}

export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
