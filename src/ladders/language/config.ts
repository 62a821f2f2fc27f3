// The shape of a ladder config that has passed validation (see docs/ladder-language.md).
// The validator proves an arbitrary JSON value has this shape; the interpreter trusts it.

export type AllowedTargets =
  | { strategy: 'universal' }
  | { strategy: 'constrained'; providers: string[]; models: string[] };

export type KnobType = 'loops' | 'recursion' | 'nodes' | 'generic';

export interface KnobStep {
  title: string;
  value: number;
  default?: boolean;
}

export interface Knob {
  name: string;
  type: KnobType;
  input?: 'slider';
  description?: string;
  steps: KnobStep[];
}

/** `{{knobs.<id>}}`: allowed as the whole value of `nodes` and `recursion.maxDepth`. */
export type KnobReference = string;

export type LoopRef = 'current' | 'previous' | 'accumulate';
export type NodeRef = number | 'previous' | 'accumulate';

export interface StepSource {
  stepId: string;
  loopRef?: LoopRef;
  nodeRef?: NodeRef;
}

export interface TextField {
  name: string;
  type: 'text';
  from: string;
}

export interface IngestField {
  name: string;
  type: 'ingest';
  from: StepSource;
  skipFirstNode?: boolean;
}

export interface MultiIngestField {
  name: string;
  type: 'multi_ingest';
  from: StepSource;
}

export interface KnobInfoField {
  name: string;
  type: 'knobInfo';
  from: string;
}

export interface NodeInfoField {
  name: string;
  type: 'nodeInfo';
}

export type Field = TextField | IngestField | MultiIngestField | KnobInfoField | NodeInfoField;

export interface Recursion {
  maxDepth: number | KnobReference;
}

interface StepBase {
  id: string;
  name: string;
  timeline?: unknown;
}

export interface ModelStep extends StepBase {
  type: 'normal' | 'sequential';
  fields?: Field[];
  systemPrompt?: string;
  nodes?: number | KnobReference;
  continueIf?: string;
  recursion?: Recursion;
}

export interface GroupStep extends StepBase {
  type: 'group';
  steps: ModelStep[];
}

export type Step = ModelStep | GroupStep;

export interface ExecutionBudget {
  maxSpend: number;
}

export interface LadderConfig {
  name: string;
  description?: string;
  allowedTargets?: AllowedTargets;
  exit: string;
  knobs?: Record<string, Knob>;
  steps: Step[];
  executionBudget?: ExecutionBudget;
}
