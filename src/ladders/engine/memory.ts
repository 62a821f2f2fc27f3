// What a run remembers: each pass's surviving outputs per step, and how fields read them.
import type { IngestField, MultiIngestField, NodeRef, StepSource } from '../language/config.js';
import type { FieldSources, ListItem } from './prompt.js';

export interface NodeOutput {
  node: number;
  text: string;
}

/** The sequential step being run, as its own later nodes see it: raw, before its gate. */
export interface StepInProgress {
  stepId: string;
  outputs: NodeOutput[];
}

/** Counts the output bytes a run holds, so that it can stop a run holding too many. */
export interface MemoryMeter {
  /** Throws when the run now holds more than it may. */
  hold(bytes: number): void;
  release(bytes: number): void;
}

export const outputBytes = (outputs: NodeOutput[]): number => outputs.reduce((sum, o) => sum + Buffer.byteLength(o.text), 0);

export class RunMemory {
  /** passes[p - 1]: step id to its surviving outputs in node order, for pass p. */
  private readonly passes: Map<string, NodeOutput[]>[] = [];

  /**
   * `keepAllPasses`: a config that accumulates across passes reads every earlier pass; any
   * other reads only the current and the previous one, so older passes are let go.
   */
  constructor(
    private readonly meter?: MemoryMeter,
    private readonly keepAllPasses = true,
  ) {}

  /** The 1-based number of the pass under way. */
  get pass(): number {
    return this.passes.length;
  }

  beginPass(): void {
    this.passes.push(new Map());
    const stale = this.passes.length - 3;
    if (!this.keepAllPasses && stale >= 0) {
      this.drop(this.passes[stale]!);
      this.passes[stale] = new Map();
    }
  }

  store(stepId: string, outputs: NodeOutput[]): void {
    const current = this.passes.at(-1);
    if (!current) return;
    const replaced = current.get(stepId);
    if (replaced) this.meter?.release(outputBytes(replaced));
    current.set(stepId, outputs);
    this.meter?.hold(outputBytes(outputs));
  }

  /** Lets go of everything (a recursion child that has answered). */
  clear(): void {
    for (const pass of this.passes) this.drop(pass);
    this.passes.length = 0;
  }

  private drop(pass: Map<string, NodeOutput[]>): void {
    for (const outputs of pass.values()) this.meter?.release(outputBytes(outputs));
  }

  outputs(pass: number, stepId: string): NodeOutput[] {
    return this.passes[pass - 1]?.get(stepId) ?? [];
  }

  /** A step's value: its last surviving output, or empty when it has none. */
  value(pass: number, stepId: string): string {
    return this.outputs(pass, stepId).at(-1)?.text ?? '';
  }

  /** The field sources for one node of a step in the current pass. */
  sources(input: string, knobs: Record<string, number>, node: number, self?: StepInProgress): FieldSources {
    return {
      input,
      knobs,
      node,
      single: (field) => this.readSingle(field, node, self),
      list: (field) => this.readList(field, node, self),
    };
  }

  // Reading a sequential step from inside itself sees its earlier nodes so far, ungated:
  // its gate only applies once all its nodes have finished.
  private outputsAt(pass: number, stepId: string, self?: StepInProgress): NodeOutput[] {
    if (self && self.stepId === stepId && pass === this.pass) return self.outputs;
    return this.outputs(pass, stepId);
  }

  private selectedPass(source: StepSource): number {
    return source.loopRef === 'previous' ? this.pass - 1 : this.pass;
  }

  private readSingle(field: IngestField, node: number, self?: StepInProgress): string {
    if (field.skipFirstNode && node === 1) return '';
    const pass = this.selectedPass(field.from);
    if (pass < 1) return '';
    return this.pick(pass, field.from, node, self)?.text ?? '';
  }

  /** One output of a step in a pass, as a nodeRef selects it (none: the step's value). */
  private pick(pass: number, source: StepSource, node: number, self?: StepInProgress): NodeOutput | undefined {
    const outputs = this.outputsAt(pass, source.stepId, self);
    const ref: NodeRef | undefined = source.nodeRef;
    if (typeof ref === 'number') return outputs.find((o) => o.node === ref);
    const readsItself = self?.stepId === source.stepId && pass === this.pass;
    if (ref === 'previous' || readsItself) {
      // Node 1 has no node before it in this pass; the chain goes on from the step's value in
      // the pass before (nothing on the first pass). skipFirstNode is how to opt out.
      if (node === 1) return pass > 1 ? this.outputs(pass - 1, source.stepId).at(-1) : undefined;
      return outputs.find((o) => o.node === node - 1);
    }
    return outputs.at(-1);
  }

  private readList(field: MultiIngestField, node: number, self?: StepInProgress): ListItem[] {
    const source = field.from;
    if (source.loopRef === 'accumulate') return this.readAcrossPasses(source, node);
    const pass = this.selectedPass(source);
    if (pass < 1) return [];
    if (source.nodeRef === undefined || source.nodeRef === 'accumulate') {
      return this.outputsAt(pass, source.stepId, self).map(numberedByNode);
    }
    const picked = this.pick(pass, source, node, self);
    return picked ? [numberedByNode(picked)] : [];
  }

  // Every earlier pass, numbered by pass. A pass in which the step had no surviving node adds
  // no item, as its pruned nodes are invisible downstream. Accumulating nodes as well gives
  // each surviving node of each pass, numbered `pass.node`.
  private readAcrossPasses(source: StepSource, node: number): ListItem[] {
    const items: ListItem[] = [];
    for (let pass = 1; pass < this.pass; pass++) {
      if (source.nodeRef === 'accumulate') {
        for (const o of this.outputs(pass, source.stepId)) items.push({ label: `${pass}.${o.node}`, text: o.text });
        continue;
      }
      const picked = this.pick(pass, { ...source, nodeRef: source.nodeRef === 'previous' ? undefined : source.nodeRef }, node);
      if (picked) items.push({ label: String(pass), text: picked.text });
    }
    return items;
  }
}

const numberedByNode = (o: NodeOutput): ListItem => ({ label: String(o.node), text: o.text });
