// The ladder language's config (docs/ladder-language.md) as a JSON schema: what a config looks
// like, for the OpenAPI document and for editors. Requests are not checked against it: the
// validator (ladders/validator.ts) checks configs and reports every problem with its place,
// and the meaning rules (unique ids, reads, knob use) are its alone. The static type below must
// stay the interpreter's LadderConfig, and every config the validator accepts must pass this
// schema (test/schemas/ladder-config.test.ts).
import { Type, type Static } from '@sinclair/typebox';
import type { LadderConfig } from '../ladders/language/config.js';
import { ID_PATTERN } from '../ladders/language/knob-reference.js';
import { StringEnum } from './common.js';

/**
 * The title that marks a request or response member holding a config: the OpenAPI document
 * shows LadderConfigSchema there (plugins/openapi.ts), while the route itself accepts any value.
 */
export const LADDER_CONFIG = 'LadderConfig';

const Id = Type.String({ pattern: ID_PATTERN.source, description: 'Letters, digits, `_` and `-`; unique across the config' });
const Name = Type.String({ minLength: 1 });
const KnobReference = Type.String({ pattern: '^\\{\\{knobs\\.[A-Za-z0-9_-]+\\}\\}$', description: '`{{knobs.<id>}}`: the knob’s value' });
const CountOrKnob = (description: string) => Type.Union([Type.Number(), KnobReference], { description });

const StepSourceSchema = Type.Object(
  {
    stepId: Type.String({ description: 'The step read (not a group)' }),
    loopRef: Type.Optional(StringEnum(['current', 'previous', 'accumulate'], { description: 'The pass read; default `current`' })),
    nodeRef: Type.Optional(
      Type.Union([Type.Number(), StringEnum(['previous', 'accumulate'])], { description: 'A node number from 1, `previous` or `accumulate`' }),
    ),
  },
  { additionalProperties: false },
);

const FieldSchema = Type.Union(
  [
    Type.Object(
      { name: Name, type: Type.Literal('text'), from: Type.String({ description: '`input.context`: the ladder input' }) },
      { additionalProperties: false },
    ),
    Type.Object(
      { name: Name, type: Type.Literal('ingest'), from: StepSourceSchema, skipFirstNode: Type.Optional(Type.Boolean()) },
      { additionalProperties: false },
    ),
    Type.Object({ name: Name, type: Type.Literal('multi_ingest'), from: StepSourceSchema }, { additionalProperties: false }),
    Type.Object(
      { name: Name, type: Type.Literal('knobInfo'), from: Type.String({ description: 'A knob id, bare' }) },
      { additionalProperties: false },
    ),
    Type.Object({ name: Name, type: Type.Literal('nodeInfo') }, { additionalProperties: false }),
  ],
  { description: 'What a step’s prompt is made of: `text`, `ingest`, `multi_ingest`, `knobInfo` or `nodeInfo`' },
);

const Timeline = Type.Optional(Type.Unknown({ description: 'A display hint, stored and ignored when running' }));

const ModelStepSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    type: StringEnum(['normal', 'sequential'], { description: '`normal`: nodes run concurrently; `sequential`: one after another' }),
    fields: Type.Optional(Type.Array(FieldSchema)),
    systemPrompt: Type.Optional(Type.String()),
    nodes: Type.Optional(CountOrKnob('How many model calls the step makes: a whole number of at least 1 (default 1)')),
    continueIf: Type.Optional(Type.String({ description: 'A gate (docs/ladder-language.md#gates)' })),
    recursion: Type.Optional(
      Type.Object({ maxDepth: CountOrKnob('0 to 10') }, { additionalProperties: false }),
    ),
    timeline: Timeline,
  },
  { additionalProperties: false },
);

const GroupStepSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    type: Type.Literal('group'),
    steps: Type.Array(ModelStepSchema, { minItems: 1, description: 'Run side by side' }),
    timeline: Timeline,
  },
  { additionalProperties: false },
);

const KnobSchema = Type.Object(
  {
    name: Type.String(),
    type: StringEnum(['loops', 'recursion', 'nodes', 'generic']),
    input: Type.Optional(Type.Literal('slider', { description: 'A hint for user interfaces' })),
    description: Type.Optional(Type.String()),
    steps: Type.Array(
      Type.Object(
        { title: Type.String(), value: Type.Number(), default: Type.Optional(Type.Boolean()) },
        { additionalProperties: false },
      ),
      { minItems: 1, description: 'The allowed values; at most one is the default (else the first)' },
    ),
  },
  { additionalProperties: false },
);

const AllowedTargetsSchema = Type.Union(
  [
    Type.Object({ strategy: Type.Literal('universal') }, { additionalProperties: false }),
    Type.Object(
      {
        strategy: Type.Literal('constrained'),
        providers: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'Provider ids, or `["*"]`' }),
        models: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'Model names, or `["*"]`' }),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'Which models may run the ladder; absent: any' },
);

export const LadderConfigSchema = Type.Object(
  {
    name: Name,
    description: Type.Optional(Type.String()),
    allowedTargets: Type.Optional(AllowedTargetsSchema),
    exit: Type.String({ description: 'The step whose output is the answer' }),
    knobs: Type.Optional(Type.Record(Id, KnobSchema, { description: 'Settings a caller may turn per request, by knob id' })),
    steps: Type.Array(Type.Union([ModelStepSchema, GroupStepSchema]), { minItems: 1, description: 'Run in order' }),
    executionBudget: Type.Optional(
      Type.Object(
        { maxSpend: Type.Number({ minimum: 0, maximum: 50, description: 'USD per run, recursion children included: more than 0, at most 50' }) },
        { additionalProperties: false },
      ),
    ),
  },
  {
    $id: LADDER_CONFIG,
    additionalProperties: false,
    description:
      'A ladder config (docs/ladder-language.md). Requests are not checked against this schema: the validator reports ' +
      'every problem at once, schema problems first, and also checks what a schema cannot say (unique ids, which step ' +
      'may read which, knob use).',
  },
);

// The schema and the interpreter's type must describe the same configs.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _sameAsLadderConfig: Same<Static<typeof LadderConfigSchema>, LadderConfig> = true;
