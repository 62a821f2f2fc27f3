// Chat chunks (the one internal stream shape) as OpenAI's Responses events: items open with
// output_item.added, text arrives as output_text.delta inside a content part, tool calls as
// function_call_arguments.delta, and every item is closed with its .done events before the
// response's last event. Pure: the route writes what this returns.
import type { StreamChunk } from '../providers/stream/types.js';
import type { FinishReason } from '../providers/types.js';
import type { ResponseObject } from '../schemas/responses.js';
import { outputText } from './from-chat.js';
import { itemId } from './ids.js';
import type { Item } from './input.js';

export type ResponseEvent = Record<string, unknown> & { type: string; sequence_number: number };

interface Part {
  type: 'output_text' | 'refusal';
  index: number;
  body: Record<string, unknown>;
  text: string;
}

export class ResponseEvents {
  /** Every output item so far, in order, with the text and arguments received. */
  readonly output: Item[] = [];
  finish: FinishReason | null = null;
  private sequence = 0;
  /** The item deltas currently go to: the message (its output index) or a call (by its chat index). */
  private open: { kind: 'message'; index: number; part: Part | null; parts: Part[] } | { kind: 'call'; index: number } | null = null;
  private readonly calls = new Map<number, number>();

  /** response.created and response.in_progress, with the response as it starts. */
  start(shell: ResponseObject): ResponseEvent[] {
    return [this.event('response.created', { response: shell }), this.event('response.in_progress', { response: shell })];
  }

  chunk(chunk: StreamChunk): ResponseEvent[] {
    const events: ResponseEvent[] = [];
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue;
      const { delta } = choice;
      if (typeof delta.content === 'string' && delta.content !== '') this.text('output_text', delta.content, events);
      if (typeof delta.refusal === 'string' && delta.refusal !== '') this.text('refusal', delta.refusal, events);
      for (const call of delta.tool_calls ?? []) this.toolCall(call, events);
      if (choice.finish_reason) this.finish = choice.finish_reason;
    }
    return events;
  }

  /** Closes what is open (an answer with nothing in it is one empty message, as a whole answer is). */
  end(): ResponseEvent[] {
    const events: ResponseEvent[] = [];
    if (this.output.length === 0) this.openPart('output_text', events);
    this.close(events);
    return events;
  }

  /** The stream was cut: the open item is kept as `incomplete`, without .done events that would call it whole. */
  abandon(): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    const item = this.output[open.index]!;
    if (open.kind === 'message' && open.part) (item.content as unknown[]).push(partDone(open.part));
    item.status = 'incomplete';
  }

  /** The last event: response.completed, response.incomplete or response.failed, with the whole response. */
  last(response: ResponseObject): ResponseEvent {
    const type = response.status === 'failed' ? 'response.failed' : response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    return this.event(type, { response });
  }

  private text(type: Part['type'], delta: string, events: ResponseEvent[]): void {
    const part = this.openPart(type, events);
    part.text += delta;
    const item = this.output[this.open!.index]!;
    const name = type === 'output_text' ? 'response.output_text.delta' : 'response.refusal.delta';
    events.push(this.event(name, { item_id: item.id, output_index: this.open!.index, content_index: part.index, delta, ...(type === 'output_text' ? { logprobs: [] } : {}) }));
  }

  /** The message's part of this type, opening the message and the part as needed. */
  private openPart(type: Part['type'], events: ResponseEvent[]): Part {
    if (this.open?.kind !== 'message') {
      this.close(events);
      const item: Item = { id: itemId('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] };
      this.open = { kind: 'message', index: this.output.length, part: null, parts: [] };
      this.output.push(item);
      events.push(this.event('response.output_item.added', { output_index: this.open.index, item: structuredClone(item) }));
    }
    const message = this.open;
    if (message.part?.type === type) return message.part;
    if (message.part) this.closePart(message.index, message.part, events);
    const body = type === 'output_text' ? outputText('') : { type: 'refusal', refusal: '' };
    const part: Part = { type, index: message.parts.length, body, text: '' };
    message.parts.push(part);
    message.part = part;
    events.push(this.event('response.content_part.added', { item_id: this.output[message.index]!.id, output_index: message.index, content_index: part.index, part: structuredClone(body) }));
    return part;
  }

  private toolCall(call: NonNullable<StreamChunk['choices'][number]['delta']['tool_calls']>[number], events: ResponseEvent[]): void {
    let index = this.calls.get(call.index);
    if (index === undefined) {
      this.close(events);
      index = this.output.length;
      const item: Item = { id: itemId('fc'), type: 'function_call', status: 'in_progress', arguments: '', call_id: call.id ?? '', name: call.function?.name ?? '' };
      this.output.push(item);
      this.calls.set(call.index, index);
      this.open = { kind: 'call', index };
      events.push(this.event('response.output_item.added', { output_index: index, item: structuredClone(item) }));
    } else {
      const item = this.output[index]!;
      // A vendor may spread the id and name over several deltas.
      if (call.id && !item.call_id) item.call_id = call.id;
      if (call.function?.name && !item.name) item.name = call.function.name;
    }
    const piece = call.function?.arguments;
    if (piece) {
      const item = this.output[index]!;
      item.arguments = String(item.arguments) + piece;
      events.push(this.event('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: piece }));
    }
  }

  private closePart(index: number, part: Part, events: ResponseEvent[]): void {
    const item = this.output[index]!;
    const done = partDone(part);
    (item.content as unknown[]).push(done);
    const base = { item_id: item.id, output_index: index, content_index: part.index };
    events.push(part.type === 'output_text'
      ? this.event('response.output_text.done', { ...base, text: part.text, logprobs: [] })
      : this.event('response.refusal.done', { ...base, refusal: part.text }));
    events.push(this.event('response.content_part.done', { ...base, part: structuredClone(done) }));
  }

  private close(events: ResponseEvent[]): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    const item = this.output[open.index]!;
    if (open.kind === 'message') {
      if (open.part) this.closePart(open.index, open.part, events);
      item.status = this.finish === 'length' ? 'incomplete' : 'completed';
    } else {
      item.status = 'completed';
      events.push(this.event('response.function_call_arguments.done', { item_id: item.id, output_index: open.index, name: item.name, arguments: item.arguments }));
    }
    events.push(this.event('response.output_item.done', { output_index: open.index, item: structuredClone(item) }));
  }

  private event(type: string, fields: Record<string, unknown>): ResponseEvent {
    return { type, ...fields, sequence_number: this.sequence++ };
  }
}

const partDone = (part: Part) => Object.assign(part.body, part.type === 'output_text' ? { text: part.text } : { refusal: part.text });
