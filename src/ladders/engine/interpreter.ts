// The ladder interpreter: runs a validated config against one model, as docs/ladder-language.md
// describes, through an injected ModelCall. It knows nothing of HTTP or storage.
//
// Decisions the language leaves open, taken here:
// - A run fails as soon as any node of any step fails (the step cannot produce a complete
//   output, and a partial one would silently change what later steps read); calls still in
//   flight are aborted. The failure is a LadderRunError carrying usage, spend and trace.
// - Caps on nodes, recursion depth and call count are checked before the first call (see
//   checkRunLimits); budget and wall time are checked as the run goes.
// - A recursion child is a function call: its answer replaces the recursion step's output
//   (as a single output numbered 1) and the parent's later steps run on it, so every level
//   builds on the level below and no paid call is discarded.
import type { GroupStep, LadderConfig, ModelStep } from '../language/config.js';
import { createLimiter, type Limiter } from './concurrency.js';
import { maxDepthOf, nodeCount, passCount } from './knobs.js';
import { checkRunLimits } from './limits.js';
import { outputBytes, RunMemory, type NodeOutput } from './memory.js';
import { buildPrompt } from './prompt.js';
import { RunContext } from './run-context.js';
import type { DeltaSink } from '../../providers/types.js';
import { TRACE_OUTPUT_CHARS, type RunOptions, type RunResult, type StepPlace, type StepTrace } from './run-types.js';

export { LadderRunError, TRACE_OUTPUT_CHARS, TRACE_PROMPT_CHARS } from './run-types.js';
export type { NodeTrace, RunJournal, RunLimits, RunOptions, RunResult, RunTracer, StepTrace } from './run-types.js';

/** Runs a ladder to its answer. Every failure is thrown as a LadderRunError. */
export async function runLadder(options: RunOptions): Promise<RunResult> {
  const run = new RunContext(options);
  try {
    checkRunLimits(options.config, options.knobs, options.limits);
    run.throwIfHalted();
    const engine: Engine = { options, run, keepAllPasses: accumulatesAcrossPasses(options.config) };
    const answer = await runPasses(engine, { input: options.input, depth: 0, lineage: '', passes: passCount(options.config, options.knobs), answers: true });
    return { answer, ...run.progress() };
  } catch (error) {
    throw run.toRunError(error);
  } finally {
    run.dispose();
  }
}

interface Engine {
  options: RunOptions;
  run: RunContext;
  keepAllPasses: boolean;
}

/** Where one run at one recursion depth sits: its input, depth and passes. */
interface LevelPlace {
  input: string;
  depth: number;
  /** Where this level sits: empty for the root, else the parent's pass and step per level (see callKey). */
  lineage: string;
  passes: number;
  /** This level's answer is the run's: the root, or a child whose answer replaces its parent's answering exit output. */
  answers: boolean;
}

/** One run at one recursion depth. */
interface Level extends LevelPlace {
  engine: Engine;
  memory: RunMemory;
}

/**
 * A call's stable name within its run, the same on every attempt: `<pass>.<step id>.<node>`,
 * behind the recursion lineage `<pass>.<step id>/` of each ancestor step that spawned it.
 * `2.refine/1.draft.3`: node 3 of step draft, pass 1 of the child that step refine spawned
 * in pass 2 of the root run. Step ids use only letters, digits, `_` and `-`.
 */
export const callKey = (lineage: string, pass: number, stepId: string, node: number): string => `${lineage}${pass}.${stepId}.${node}`;

/** Only loopRef `accumulate` reads passes before the previous one. */
function accumulatesAcrossPasses(config: LadderConfig): boolean {
  return config.steps
    .flatMap((step) => (step.type === 'group' ? step.steps : [step]))
    .some((step) => (step.fields ?? []).some((f) => (f.type === 'ingest' || f.type === 'multi_ingest') && f.from.loopRef === 'accumulate'));
}

/** Runs the config's passes at one depth; answers with its exit step's value. */
async function runPasses(engine: Engine, place: LevelPlace): Promise<string> {
  const { config } = engine.options;
  const { depth, passes } = place;
  const level: Level = Object.assign({ engine, memory: new RunMemory(engine.run, engine.keepAllPasses) }, place);
  for (let pass = 1; pass <= passes; pass++) {
    level.memory.beginPass();
    for (const step of config.steps) {
      const ran = step.type === 'group' ? await runGroup(level, step) : [await runStep(level, step, stepLimiter(engine))];
      for (const { step: model, trace } of ran) {
        if (model.recursion) await recurse(level, model, trace);
      }
    }
  }
  const answer = level.memory.value(passes, config.exit);
  if (depth > 0) level.memory.clear();
  return answer;
}

interface RanStep {
  step: ModelStep;
  trace: StepTrace;
}

const stepLimiter = (engine: Engine): Limiter => createLimiter(engine.options.limits.maxConcurrentCalls);

/** A group's children run side by side, their calls sharing one concurrency bound. */
async function runGroup(level: Level, group: GroupStep): Promise<RanStep[]> {
  const limiter = stepLimiter(level.engine);
  return settleAll(
    level.engine.run,
    group.steps.map((child) => runStep(level, child, limiter, group.id)),
  );
}

async function runStep(level: Level, step: ModelStep, limiter: Limiter, groupId?: string): Promise<RanStep> {
  const place: StepPlace = { pass: level.memory.pass, depth: level.depth, stepId: step.id, ...(groupId ? { groupId } : {}) };
  const tracer = level.engine.options.tracer;
  return tracer ? tracer.step(place, () => executeStep(level, step, limiter, place)) : executeStep(level, step, limiter, place);
}

async function executeStep(level: Level, step: ModelStep, limiter: Limiter, place: StepPlace): Promise<RanStep> {
  const { engine, memory } = level;
  const { config, knobs, tracer } = engine.options;
  const nodes = nodeCount(step, knobs, config);
  const trace = engine.run.openStep(place);
  const journal = engine.options.journal;
  journal?.stepStarted?.(place);
  const sink = answerSink(level, step, nodes);
  const ask = (node: number, earlier?: NodeOutput[]) =>
    limiter(async (): Promise<NodeOutput> => {
      const self = earlier ? { stepId: step.id, outputs: earlier } : undefined;
      const prompt = buildPrompt(step, memory.sources(level.input, knobs, node, self));
      const nodePlace = Object.assign({}, place, { node, key: callKey(level.lineage, memory.pass, step.id, node) });
      const call = () => engine.run.callNode(trace, nodePlace, prompt, step.continueIf, sink);
      return { node, text: await (tracer ? tracer.node(nodePlace, call) : call()) };
    });

  let outputs: NodeOutput[];
  if (step.type === 'sequential') {
    outputs = [];
    for (let node = 1; node <= nodes; node++) outputs.push(await ask(node, [...outputs]));
  } else {
    outputs = await settleAll(engine.run, Array.from({ length: nodes }, (_, i) => ask(i + 1)));
  }

  const gate = step.continueIf;
  const survivors = gate === undefined ? outputs : outputs.filter((o) => o.text.trim() === gate);
  if (gate !== undefined) {
    for (const node of trace.nodes) node.survived = survivors.some((o) => o.node === node.node);
  }
  // The outputs were held as they arrived; from here the memory holds the survivors.
  engine.run.release(outputBytes(outputs));
  memory.store(step.id, survivors);
  journal?.stepCompleted?.(place, survivors.map((o) => o.node));
  return { step, trace };
}

/** Whether the step's output at this level is replaced by a recursion child's answer. */
function recurses(level: Level, step: ModelStep): boolean {
  const { knobs, config } = level.engine.options;
  return step.recursion !== undefined && level.depth < maxDepthOf(step.recursion, knobs, config);
}

/** The answer's exit step in the last pass: its output is the run's answer (after any recursion). */
const makesAnswer = (level: Level, step: ModelStep) =>
  level.answers && step.id === level.engine.options.config.exit && level.memory.pass === level.passes;

/**
 * The run's answer sink, for the step whose one call makes the answer as it comes: one node,
 * no gate to prune it, no recursion left to replace it. Otherwise none (the caller sends the
 * answer whole once it is known).
 */
function answerSink(level: Level, step: ModelStep, nodes: number): DeltaSink | undefined {
  const sink = level.engine.options.onAnswerDelta;
  if (!sink || nodes !== 1 || step.continueIf !== undefined || !makesAnswer(level, step) || recurses(level, step)) return undefined;
  return sink;
}

/**
 * While this run's depth is below maxDepth, a child run of the same config (one pass) takes
 * the step's output as its input, like a function call; the child's answer (its exit step's
 * value, built in turn on its own child's answer) then replaces that output here.
 */
async function recurse(level: Level, step: ModelStep, trace: StepTrace): Promise<void> {
  const { engine, memory } = level;
  if (!recurses(level, step)) return;
  const answer = await runPasses(engine, {
    input: memory.value(memory.pass, step.id),
    depth: level.depth + 1,
    lineage: `${level.lineage}${memory.pass}.${step.id}/`,
    passes: 1,
    answers: makesAnswer(level, step),
  });
  memory.store(step.id, [{ node: 1, text: answer }]);
  trace.recursionAnswer = answer.slice(0, TRACE_OUTPUT_CHARS);
}

// Waits for every task, so that none is left running unobserved, then fails with the run's
// first failure (the one that halted the rest) rather than whichever task happens to be first.
async function settleAll<T>(run: RunContext, tasks: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(tasks);
  const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (rejected) throw run.failure(rejected.reason);
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}
