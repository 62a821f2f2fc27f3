// Running a saved ladder for a caller: the allowedTargets check, the request's input and
// knobs, the instance row, and the interpreter. The synchronous route runs through here; it
// records its run exactly as the background worker does (src/worker/execute.ts).
import { invalidRequest } from '../errors.js';
import type { AllowedTargets, LadderConfig } from '../ladders/config.js';
import type { RunLimits, RunResult } from '../ladders/interpreter.js';
import { resolveKnobs } from '../ladders/knobs.js';
import type { PriceTable } from '../ladders/pricing.js';
import { candidatesFor, explicitSelection } from '../providers/catalog.js';
import type { RouterLogger } from '../providers/router.js';
import type { ChatMessage, ModelCall, ProviderConnection } from '../providers/types.js';
import type { Principal } from './authenticator.js';
import { stepsTotal, type RunExecutor } from '../worker/execute.js';
import type { InstanceRow, InstanceService, NewInstance } from './instances.js';
import { allowedTargetsOf, type VisibleLadder } from './ladders.js';

export type PlatformLimits = Omit<RunLimits, 'maxSpendUsd'> & { defaultMaxSpend: number };

export interface LadderRunnerDeps {
  instances: InstanceService;
  /** Records a synchronous run's row, running and held (leased) by this process. */
  startSync: (input: NewInstance, stepsTotal: number) => Promise<InstanceRow>;
  executor: RunExecutor;
  connections: { forRouting(accountId: string): Promise<ProviderConnection[]> };
  route: (request: Parameters<ModelCall>[0], connections: ProviderConnection[], signal?: AbortSignal, log?: RouterLogger) => ReturnType<ModelCall>;
  limits: PlatformLimits;
  prices: PriceTable;
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
}

export interface RunRequest extends RunInput {
  signal?: AbortSignal;
  /** Where provider attempts are logged (the request's logger, to carry its id). */
  log?: RouterLogger;
  /** Called once the instance row exists, before the first model call. */
  onInstance?: (instance: InstanceRow) => void;
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
   * the caller's connections. Throws the error the caller should see.
   */
  async function prepare(req: RunInput): Promise<PreparedRun> {
    const { principal, ladder, model } = req;
    const config: LadderConfig = ladder.config;
    const knobs = resolveKnobs(config, req.knobs);
    const ladderName = `${ladder.author}/${ladder.row.slug}`;
    const connections = connectionsForTargets(allowedTargetsOf(config), model, await deps.connections.forRouting(principal.accountId), ladderName);
    return { principal, ladder, model, input: lastUserText(req.messages), knobs, connections };
  }

  return {
    prepare,

    /**
     * Checks the request, records the instance, runs the ladder and records the outcome.
     * Resolves with the instance and the result; a failed run rejects with its LadderRunError
     * after the row has been finished.
     */
    async runSync(req: RunRequest): Promise<{ instance: InstanceRow; result: RunResult }> {
      const { principal, ladder, model, knobs, connections, input } = await prepare(req);
      const config: LadderConfig = ladder.config;
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
        stepsTotal(config, knobs),
      );
      req.onInstance?.(instance);
      const { defaultMaxSpend, ...caps } = deps.limits;
      const execution = await deps.executor.execute({
        held: { kind: 'sync', id: instance.id, fence: instance.fence, attempts: 1, resumed: false, cancelRequested: false },
        config,
        model,
        input: instance.input,
        knobs,
        connections,
        limits: { ...caps, maxSpendUsd: config.executionBudget?.maxSpend ?? defaultMaxSpend },
        ...(req.signal ? { signal: req.signal } : {}),
        ...(req.log ? { log: req.log } : {}),
      });
      // A failed run's row is finished by now (unless another process took it over); the error goes to the caller.
      if (execution.outcome !== 'finished') throw execution.error;
      return { instance, result: execution.result };
    },
  };
}

export type LadderRunner = ReturnType<typeof createLadderRunner>;
