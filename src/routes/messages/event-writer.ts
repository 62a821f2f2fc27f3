// The one writer of Anthropic's stream events for /v1/messages: message_start, ping, then per
// content block content_block_start / _delta / _stop, then message_delta and message_stop.
// Chunks from any vendor are turned into that sequence; Anthropic's own events (a Messages
// request routed to Anthropic) are relayed as they came. Every write is awaited (backpressure).
import type { Writable } from 'node:stream';
import type { StreamChunk } from '../../providers/stream/types.js';
import type { FinishReason, Usage } from '../../providers/types.js';
import { ClientGoneError } from '../chat/chunk-writer.js';
import { STOP_REASON, anthropicUsage } from './answer.js';
import { anthropicError } from './errors.js';
import { forget, whenAborted, type CallerSignal } from '../../abort-scope.js';

interface OpenBlock {
  index: number;
  kind: 'text' | 'tool_use';
}

export class MessagesEventWriter {
  private started = false;
  private native = false;
  private block: OpenBlock | null = null;
  private blocks = 0;
  /** Chat tool call index -> content block index. */
  private readonly tools = new Map<number, number>();
  private finish: FinishReason | null = null;
  private usage: Usage | null = null;

  constructor(private readonly out: Writable, private readonly signal: CallerSignal, private readonly message: { id: string; model: string }) {}

  async chunk(chunk: StreamChunk): Promise<void> {
    if (chunk.native !== undefined) {
      this.native = true;
      const event = chunk.native as { type: string };
      return this.event(event.type, event);
    }
    if (!this.started) await this.start();
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue;
      const { delta } = choice;
      if (typeof delta.content === 'string' && delta.content !== '') {
        if (this.block?.kind !== 'text') await this.open('text', { type: 'text', text: '' });
        await this.event('content_block_delta', { type: 'content_block_delta', index: this.block!.index, delta: { type: 'text_delta', text: delta.content } });
      }
      for (const call of delta.tool_calls ?? []) await this.toolDelta(call);
      if (choice.finish_reason) this.finish = choice.finish_reason;
    }
  }

  /** A complete answer: the open block closed, the stop reason and usage, message_stop. */
  async done(): Promise<void> {
    if (!this.native) {
      if (!this.started) await this.start();
      await this.close();
      const usage = this.usage ? anthropicUsage(this.usage) : { input_tokens: 0, output_tokens: 0 };
      await this.event('message_delta', { type: 'message_delta', delta: { stop_reason: STOP_REASON[this.finish ?? 'stop'], stop_sequence: null }, usage });
      await this.event('message_stop', { type: 'message_stop' });
    }
    this.out.end();
  }

  /** Anthropic's in-stream error event; no message_stop follows, so a cut answer cannot pass for a whole one. */
  fail(status: number, message: string): void {
    if (this.signal.aborted || this.out.writableEnded) return;
    this.out.write(sse('error', anthropicError(status, message, null)));
    this.out.end();
  }

  private async start(): Promise<void> {
    this.started = true;
    const { id, model } = this.message;
    await this.event('message_start', {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } },
    });
    await this.event('ping', { type: 'ping' });
  }

  private async toolDelta(call: NonNullable<StreamChunk['choices'][number]['delta']['tool_calls']>[number]): Promise<void> {
    let index = this.tools.get(call.index);
    if (index === undefined) {
      await this.open('tool_use', { type: 'tool_use', id: call.id ?? '', name: call.function?.name ?? '', input: {} });
      index = this.block!.index;
      this.tools.set(call.index, index);
    }
    const json = call.function?.arguments;
    if (json) await this.event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json } });
  }

  private async open(kind: OpenBlock['kind'], contentBlock: Record<string, unknown>): Promise<void> {
    await this.close();
    this.block = { index: this.blocks++, kind };
    await this.event('content_block_start', { type: 'content_block_start', index: this.block.index, content_block: contentBlock });
  }

  private async close(): Promise<void> {
    if (!this.block) return;
    const { index } = this.block;
    this.block = null;
    await this.event('content_block_stop', { type: 'content_block_stop', index });
  }

  private event(name: string, data: unknown): Promise<void> | undefined {
    if (this.signal.aborted || this.out.destroyed) throw new ClientGoneError('the client closed the connection');
    if (this.out.write(sse(name, data))) return undefined;
    return new Promise<void>((resolve) => {
      const done = () => {
        this.out.off('drain', done);
        this.out.off('close', done);
        forget(this.signal, done);
        resolve();
      };
      this.out.once('drain', done);
      this.out.once('close', done);
      whenAborted(this.signal, done);
    });
  }
}

const sse = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
