// Running a saved ladder for a caller: the allowedTargets check, the request's input and
// knobs, the instance row, and the interpreter. The synchronous route runs through here; it
// records its run exactly as the background worker does (src/worker/execute.ts).
import { invalidRequest } from '../errors.js';
import { nanosOf } from '../money.js';
import type { AllowedTargets, LadderConfig } from '../ladders/language/config.js';
import type { RunLimits, RunResult } from '../ladders/engine/interpreter.js';
import { resolveKnobs } from '../ladders/engine/knobs.js';
import { checkRunLimits, runSize } from '../ladders/engine/limits.js';
import { candidatesFor, explicitSelection } from '../providers/catalog.js';
import type { RouterLogger } from '../providers/router.js';
import type { ChatMessage, DeltaSink, ModelCall, ProviderConnection } from '../providers/types.js';
import type { Principal } from './authenticator.js';
import type { InstanceRow, InstanceService, NewInstance, NewPendingInstance } from './instances.js';
import { subjectOf, type Metering } from '../usage/metering.js';
import type { RunExecutor } from '../worker/execute.js';
import { allowedTargetsOf, type VisibleLadder } from './ladders.js';

export type PlatformLimits = Omit<RunLimits, 'maxSpendNanos'> & { defaultMaxSpend: number };

export interface LadderRunnerDeps {
  instances: InstanceService;
  /** Records a synchronous run's row, running and held (leased) by this process. */
  startSync: (input: NewInstance, stepsTotal: number) => Promise<InstanceRow>;
  executor: RunExecutor;
  connections: { forRouting(accountId: string): Promise<ProviderConnection[]> };
  limits: PlatformLimits;
  /** Quotas and the usage ledger (docs/quotas.md); absent in tests that run ladders bare. */
  metering?: Pick<Metering, 'checkRunStart' | 'ladderCall'>;
  /** The active span's W3C traceparent, kept with a queued run for its span to link to (src/telemetry/). */
  traceParent?: () => string | null;
}

/** What a caller asks to run, before any check. */
export interface RunInput {
  principal: Principal;
  ladder: VisibleLadder;
  model: string;
  messages: ChatMessage[];
  knobs: unknown;
}

/** A run request that passed every check, ready to be recorded and executed. */
export interface PreparedRun {
  principal: Principal;
  ladder: VisibleLadder;
  model: string;
  /** The ladder's input.context. */
  input: string;
  /** Effective knob values: defaults applied, clamped and rounded. */
  knobs: Record<string, number>;
  /** The caller's connections the ladder's allowedTargets let the run use, in routing order. */
  connections: ProviderConnection[];
  /** The run's caps: the platform's, with the ladder's budget or the platform default. */
  limits: RunLimits;
  /** Step executions a successful run makes (passes, group children, recursion children). */
  stepsTotal: number;
  /** Set on a rerun: the finished instance whose recorded calls it may reuse. */
  rerunOf?: string;
}

export interface RunRequest extends RunInput {
  signal?: AbortSignal;
  /** Where provider attempts are logged (the request's logger, to carry its id). */
  log?: RouterLogger;
  /** Called once the instance row exists, before the first model call. */
  onInstance?: (instance: InstanceRow) => void;
  /** A streamed run: where the answer's last call relays its text, when that call can stream (RunOptions.onAnswerDelta). */
  onAnswerDelta?: DeltaSink;
}

/** The ladder's input.context: the last user message, its text parts joined by newlines. */
export function lastUserText(messages: ChatMessage[]): string {
  const last = messages.findLast((m) => m.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return last.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

const quoted = (list: string[]) => list.map((s) => `"${s}"`).join(', ');

/**
 * The connections a run may route through under the ladder's allowedTargets, or a 400
 * model_not_allowed. `models` is matched against the requested name and, for an explicit
 * `provider/model` name, against the model part too. `providers` keeps only the caller's
 * connections of those providers that can serve the model (an explicit prefix must itself
 * be listed); `"*"` in either list accepts everything.
 */
export function connectionsForTargets(
  targets: AllowedTargets,
  model: string,
  connections: ProviderConnection[],
  ladderName: string,
): ProviderConnection[] {
  if (targets.strategy === 'universal') return connections;
  const explicit = explicitSelection(model);
  const { models, providers } = targets;
  if (!models.includes('*') && !models.includes(model) && !(explicit && models.includes(explicit.vendorModel))) {
    throw modelNotAllowed(`Model "${model}" is not allowed by ladder "${ladderName}"; its allowed models are ${quoted(models)}.`);
  }
  if (providers.includes('*')) return connections;
  if (explicit && !providers.includes(explicit.provider)) {
    throw modelNotAllowed(`Model "${model}" is not allowed by ladder "${ladderName}": provider "${explicit.provider}" is not one of its allowed providers (${quoted(providers)}).`);
  }
  const allowed = connections.filter((c) => providers.includes(c.provider));
  if (candidatesFor(model, allowed).length === 0) {
    throw modelNotAllowed(
      `Model "${model}" is not allowed by ladder "${ladderName}": none of your provider connections that can serve it is one of its allowed providers (${quoted(providers)}).`,
    );
  }
  return allowed;
}

const modelNotAllowed = (message: string) => invalidRequest('model_not_allowed', message, 'model');

export function createLadderRunner(deps: LadderRunnerDeps) {
  /**
   * Every check a run request gets before anything is recorded: knobs, allowedTargets against
   * the caller's connections, the platform caps. Throws the error the caller should see, so a
   * refused run, synchronous or background, leaves no instance behind.
   */
  async function prepare(req: RunInput): Promise<PreparedRun> {
    const { principal, ladder, model } = req;
    const config: LadderConfig = ladder.config;
    const knobs = resolveKnobs(config, req.knobs);
    const ladderName = `${ladder.author}/${ladder.row.slug}`;
    const connections = connectionsForTargets(allowedTargetsOf(config), model, await deps.connections.forRouting(principal.accountId), ladderName);
    const { defaultMaxSpend, ...caps } = deps.limits;
    const limits = { ...caps, maxSpendNanos: nanosOf(config.executionBudget?.maxSpend ?? defaultMaxSpend) };
    checkRunLimits(config, knobs, limits);
    const stepsTotal = runSize(config, knobs).steps;
    return { principal, ladder, model, input: lastUserText(req.messages), knobs, connections, limits, stepsTotal };
  }

  return {
    prepare,

    /**
     * Records a checked run as a `pending` background instance for a worker to claim. With an
     * Idempotency-Key, `created` is false when the key's instance already existed.
     */
    queue(run: PreparedRun, idempotency: NewPendingInstance['idempotency']): Promise<{ instance: InstanceRow; created: boolean }> {
      const { principal, ladder } = run;
      return deps.instances.createPending({
        ladderId: ladder.row.id,
        ladderVersion: ladder.row.currentVersion,
        author: ladder.author,
        slug: ladder.row.slug,
        accountId: principal.accountId,
        apiKeyId: principal.apiKeyId,
        model: run.model,
        input: run.input,
        knobs: run.knobs,
        stepsTotal: run.stepsTotal,
        ...(run.rerunOf ? { rerunOf: run.rerunOf } : {}),
        traceParent: deps.traceParent?.() ?? null,
        idempotency,
      });
    },

    /**
     * Checks the request, records the instance, runs the ladder and records the outcome.
     * Resolves with the instance, the result and the recorded finish time (the completion's
     * `created`); a failed run rejects with its LadderRunError after the row has been finished.
     */
    async runSync(req: RunRequest): Promise<{ instance: InstanceRow; result: RunResult; finishedAt: Date }> {
      const { principal, ladder, model, knobs, connections, input, limits, stepsTotal } = await prepare(req);
      const config: LadderConfig = ladder.config;
      await deps.metering?.checkRunStart(subjectOf(principal)); // quotas: refuse a run over a limit before recording it
      const leasedAt = performance.now();
      const instance = await deps.startSync(
        {
          ladderId: ladder.row.id,
          ladderVersion: ladder.row.currentVersion,
          author: ladder.author,
          slug: ladder.row.slug,
          accountId: principal.accountId,
          apiKeyId: principal.apiKeyId,
          mode: 'sync',
          model,
          input,
          knobs,
        },
        stepsTotal,
      );
      req.onInstance?.(instance);
      const execution = await deps.executor.execute({
        held: { kind: 'sync', id: instance.id, fence: instance.fence, attempts: 1, resumed: false, cancelRequested: false, leasedAt },
        config,
        model,
        input: instance.input,
        knobs,
        connections,
        limits,
        meter: (call) => meteredCall(deps, principal, `${ladder.author}/${ladder.row.slug}`, instance.id, call),
        ladder: `${ladder.author}/${ladder.row.slug}`,
        ...(req.signal ? { signal: req.signal } : {}),
        ...(req.log ? { log: req.log } : {}),
        ...(req.onAnswerDelta ? { onAnswerDelta: req.onAnswerDelta } : {}),
      });
      // A failed run's row is finished by now (unless another process took it over); the error goes to the caller.
      if (execution.outcome !== 'finished') throw execution.error;
      return { instance, result: execution.result, finishedAt: execution.finishedAt };
    },
  };
}

export type LadderRunner = ReturnType<typeof createLadderRunner>;

/** Every model call of a run counts against the caller's limits and is recorded in the usage ledger. */
function meteredCall(deps: LadderRunnerDeps, principal: Principal, ladder: string, instanceId: string, call: ModelCall): ModelCall {
  return deps.metering ? deps.metering.ladderCall({ subject: subjectOf(principal), ladder, instanceId }, call) : call;
}
