// Prompt assembly: a model call's prompt is built from its step's fields, never from a template.
import type { Field, IngestField, ModelStep, MultiIngestField } from '../language/config.js';

/** One numbered line of a multi_ingest: `label` is a node number, a pass number, or `pass.node`. */
export interface ListItem {
  label: string;
  text: string;
}

export type RenderedField =
  | { name: string; kind: 'single'; value: string }
  | { name: string; kind: 'list'; items: ListItem[] };

/** Where a node's field values come from; the interpreter answers from the run's memory. */
export interface FieldSources {
  /** The run's `input.context`. */
  input: string;
  knobs: Record<string, number>;
  /** The 1-based number of the node being prompted. */
  node: number;
  single(field: IngestField): string;
  list(field: MultiIngestField): ListItem[];
}

export const SYSTEM_INSTRUCTION_HEADING = '[System Instruction]';

/**
 * Each field as `Name: value` (a list as `Name 1: ...` lines), blank lines between fields,
 * then the system prompt under its heading. A list with no items leaves no line at all.
 */
export function assemblePrompt(fields: RenderedField[], systemPrompt?: string): string {
  const blocks: string[] = [];
  for (const field of fields) {
    if (field.kind === 'single') blocks.push(`${field.name}: ${field.value}`);
    else if (field.items.length > 0) {
      blocks.push(field.items.map((item) => `${field.name} ${item.label}: ${item.text}`).join('\n'));
    }
  }
  // An empty systemPrompt is treated as none, so a heading never stands over nothing.
  if (systemPrompt) blocks.push(`${SYSTEM_INSTRUCTION_HEADING}\n${systemPrompt}`);
  return blocks.join('\n\n');
}

export function renderField(field: Field, sources: FieldSources): RenderedField {
  switch (field.type) {
    case 'text':
      // `input.context` is the only source a validated config can name today.
      return single(field.name, field.from === 'input.context' ? sources.input : '');
    case 'knobInfo': {
      const value = sources.knobs[field.from];
      return single(field.name, value === undefined ? '' : String(value));
    }
    case 'nodeInfo':
      return single(field.name, String(sources.node));
    case 'ingest':
      return single(field.name, sources.single(field));
    case 'multi_ingest':
      return { name: field.name, kind: 'list', items: sources.list(field) };
  }
}

export function buildPrompt(step: ModelStep, sources: FieldSources): string {
  return assemblePrompt((step.fields ?? []).map((field) => renderField(field, sources)), step.systemPrompt);
}

const single = (name: string, value: string): RenderedField => ({ name, kind: 'single', value });
