// Every member of OpenAI's chat completions request, vendor by vendor: it reaches the vendor in
// that vendor's form, is a documented no-op, or is the documented 400 (docs/providers.md).
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { adapters } from '../../src/providers/adapters/index.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { toChatRequest } from '../../src/routes/chat/completion.js';
import { ChatParameters } from '../../src/schemas/chat.js';

const base: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'Hi' }] };
const tool = { type: 'function' as const, function: { name: 'f', description: 'd', parameters: { type: 'object', properties: {} } } };
const schema = { type: 'object', properties: { a: { type: 'string' } } };

/** What a vendor makes of a member: a part of its body, nothing (a documented no-op), or the 400. */
type Outcome = { body: Record<string, unknown> } | 'noop' | 'unsupported';
interface Row {
  value: unknown;
  /** Other members the row needs (e.g. tools for tool_choice). */
  with?: Partial<ChatRequest>;
  anthropic: Outcome;
  google: Outcome;
}

// stream_options only means something with stream: true (refused), so the route drops it before routing.
const rows: Record<Exclude<keyof typeof ChatParameters, 'stream_options'>, Row> = {
  audio: { value: { format: 'wav', voice: 'alloy' }, anthropic: 'unsupported', google: 'unsupported' },
  frequency_penalty: { value: 0.5, anthropic: 'unsupported', google: { body: { generationConfig: { frequencyPenalty: 0.5 } } } },
  function_call: { value: 'auto', anthropic: 'unsupported', google: 'unsupported' },
  functions: { value: [{ name: 'f' }], anthropic: 'unsupported', google: 'unsupported' },
  logit_bias: { value: { '50256': -100 }, anthropic: 'unsupported', google: 'unsupported' },
  logprobs: { value: true, anthropic: 'unsupported', google: { body: { generationConfig: { responseLogprobs: true } } } },
  max_completion_tokens: { value: 100, anthropic: { body: { max_tokens: 100 } }, google: { body: { generationConfig: { maxOutputTokens: 100 } } } },
  max_tokens: { value: 100, anthropic: { body: { max_tokens: 100 } }, google: { body: { generationConfig: { maxOutputTokens: 100 } } } },
  metadata: { value: { team: 'a' }, anthropic: 'noop', google: 'noop' },
  modalities: { value: ['text', 'audio'], anthropic: 'unsupported', google: 'unsupported' },
  moderation: { value: { model: 'omni-moderation-latest' }, anthropic: 'unsupported', google: 'unsupported' },
  n: { value: 3, anthropic: 'unsupported', google: { body: { generationConfig: { candidateCount: 3 } } } },
  parallel_tool_calls: {
    value: false,
    with: { tools: [tool] },
    anthropic: { body: { tool_choice: { type: 'auto', disable_parallel_tool_use: true } } },
    google: 'unsupported',
  },
  prediction: { value: { type: 'content', content: 'x' }, anthropic: 'unsupported', google: 'unsupported' },
  presence_penalty: { value: -0.5, anthropic: 'unsupported', google: { body: { generationConfig: { presencePenalty: -0.5 } } } },
  prompt_cache_key: { value: 'k', anthropic: 'noop', google: 'noop' },
  prompt_cache_options: { value: { mode: 'implicit' }, anthropic: 'noop', google: 'noop' },
  prompt_cache_retention: { value: '24h', anthropic: 'noop', google: 'noop' },
  reasoning_effort: {
    value: 'medium',
    anthropic: { body: { thinking: { type: 'enabled', budget_tokens: 8192 }, max_tokens: 4096 + 8192 } },
    google: { body: { generationConfig: { thinkingConfig: { thinkingBudget: 8192 } } } },
  },
  response_format: {
    value: { type: 'json_schema', json_schema: { name: 'out', schema } },
    anthropic: { body: { tools: [{ name: 'out', input_schema: schema }], tool_choice: { type: 'tool', name: 'out' } } },
    google: { body: { generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } } },
  },
  safety_identifier: { value: 'user-hash', anthropic: { body: { metadata: { user_id: 'user-hash' } } }, google: 'noop' },
  seed: { value: 7, anthropic: 'unsupported', google: { body: { generationConfig: { seed: 7 } } } },
  service_tier: { value: 'flex', anthropic: 'noop', google: 'noop' },
  stop: { value: 'END', anthropic: { body: { stop_sequences: ['END'] } }, google: { body: { generationConfig: { stopSequences: ['END'] } } } },
  store: { value: true, anthropic: 'noop', google: 'noop' },
  temperature: { value: 0.5, anthropic: { body: { temperature: 0.5 } }, google: { body: { generationConfig: { temperature: 0.5 } } } },
  tool_choice: {
    value: 'required',
    with: { tools: [tool] },
    anthropic: { body: { tool_choice: { type: 'any' } } },
    google: { body: { toolConfig: { functionCallingConfig: { mode: 'ANY' } } } },
  },
  tools: {
    value: [tool],
    anthropic: { body: { tools: [{ name: 'f', description: 'd', input_schema: tool.function.parameters }] } },
    google: { body: { tools: [{ functionDeclarations: [{ name: 'f', description: 'd', parametersJsonSchema: tool.function.parameters }] }] } },
  },
  top_logprobs: { value: 5, with: { logprobs: false }, anthropic: 'unsupported', google: 'noop' },
  top_p: { value: 0.9, anthropic: { body: { top_p: 0.9 } }, google: { body: { generationConfig: { topP: 0.9 } } } },
  user: { value: 'end-user', anthropic: { body: { metadata: { user_id: 'end-user' } } }, google: 'noop' },
  verbosity: { value: 'low', anthropic: 'unsupported', google: 'unsupported' },
  web_search_options: { value: { search_context_size: 'low' }, anthropic: 'unsupported', google: 'unsupported' },
};

function translate(provider: string, request: ChatRequest): Record<string, unknown> | ApiError {
  try {
    return adapters[provider]!.toVendor(request, 'm') as Record<string, unknown>;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

describe('every request member, vendor by vendor', () => {
  it('the table covers every member of the request schema', () => {
    expect(Object.keys(rows).sort()).toEqual(Object.keys(ChatParameters).filter((k) => k !== 'stream_options').sort());
  });

  it('the route drops stream, stream_options and null members before any vendor sees the request', () => {
    expect(toChatRequest({ ...base, stream: false, stream_options: { include_usage: true }, seed: null, top_p: 0.5 })).toEqual({ ...base, top_p: 0.5 });
  });

  for (const [param, row] of Object.entries(rows)) {
    const request = { ...base, ...row.with, [param]: row.value } as ChatRequest;

    it(`${param}: OpenAI-compatible vendors and Azure receive it unchanged`, () => {
      for (const provider of ['openai', 'mistral', 'groq', 'openrouter', 'custom', 'azure-openai']) {
        const body = translate(provider, request) as Record<string, unknown>;
        expect(body[param], provider).toEqual(param === 'max_tokens' ? 100 : row.value);
      }
      expect((translate('azure-openai', request) as Record<string, unknown>).model).toBeUndefined();
    });

    for (const provider of ['anthropic', 'google'] as const) {
      const outcome = row[provider];
      it(`${param}: ${provider} ${outcome === 'noop' ? 'ignores it (documented no-op)' : outcome === 'unsupported' ? 'refuses it: 400 unsupported_parameter' : 'receives it in its own form'}`, () => {
        const result = translate(provider, request);
        const without = translate(provider, { ...base, ...row.with } as ChatRequest);
        if (outcome === 'unsupported') {
          expect(result).toBeInstanceOf(ApiError);
          expect(result).toMatchObject({ statusCode: 400, code: 'unsupported_parameter', param });
          expect((result as ApiError).message).toContain(`${provider} cannot honour \`${param}\``);
        } else if (outcome === 'noop') {
          expect(result).toEqual(without);
        } else {
          expect(result).not.toBeInstanceOf(ApiError);
          expect(result).toMatchObject(outcome.body);
        }
      });
    }
  }
});

describe('neutral values and vendor limits', () => {
  it.each([
    ['n: 1', { n: 1 }],
    ['logprobs: false', { logprobs: false }],
    ['modalities: ["text"]', { modalities: ['text'] }],
    ['response_format text', { response_format: { type: 'text' } }],
    ['reasoning_effort none', { reasoning_effort: 'none' }],
  ])('anthropic accepts %s', (_what, extra) => {
    expect(translate('anthropic', { ...base, ...extra } as ChatRequest)).not.toBeInstanceOf(ApiError);
  });

  it('anthropic takes temperatures up to 1 only; gemini reasoning_effort none turns thinking off', () => {
    expect(translate('anthropic', { ...base, temperature: 1.5 })).toMatchObject({ code: 'unsupported_parameter', param: 'temperature' });
    expect(translate('google', { ...base, reasoning_effort: 'none' })).toMatchObject({ generationConfig: { thinkingConfig: { thinkingBudget: 0 } } });
  });

  it('anthropic json_object is a forced json_response tool; tools with a JSON format are refused', () => {
    expect(translate('anthropic', { ...base, response_format: { type: 'json_object' } })).toMatchObject({
      tools: [{ name: 'json_response', input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: 'json_response' },
    });
    expect(translate('anthropic', { ...base, tools: [tool], response_format: { type: 'json_object' } })).toMatchObject({ code: 'unsupported_parameter', param: 'response_format' });
  });

  it('gemini allowed_tools becomes allowedFunctionNames; custom tools are refused by both', () => {
    const allowed = { type: 'allowed_tools' as const, allowed_tools: { mode: 'auto' as const, tools: [{ type: 'function', function: { name: 'f' } }] } };
    expect(translate('google', { ...base, tools: [tool], tool_choice: allowed })).toMatchObject({ toolConfig: { functionCallingConfig: { mode: 'AUTO', allowedFunctionNames: ['f'] } } });
    expect(translate('anthropic', { ...base, tools: [tool], tool_choice: allowed })).toMatchObject({ code: 'unsupported_parameter', param: 'tool_choice' });
    const custom = [{ type: 'custom' as const, custom: { name: 'g' } }];
    expect(translate('anthropic', { ...base, tools: custom })).toMatchObject({ code: 'unsupported_parameter', param: 'tools' });
    expect(translate('google', { ...base, tools: custom })).toMatchObject({ code: 'unsupported_parameter', param: 'tools' });
  });

  it('content parts: input_audio reaches Gemini as inlineData and is refused by Anthropic naming the part; PDF files reach both', () => {
    const audio = { ...base, messages: [{ role: 'user' as const, content: [{ type: 'input_audio' as const, input_audio: { data: 'AAAA', format: 'wav' as const } }] }] };
    expect(translate('google', audio)).toMatchObject({ contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'audio/wav', data: 'AAAA' } }] }] });
    expect(translate('anthropic', audio)).toMatchObject({ statusCode: 400, code: 'unsupported_content', param: 'messages[0].content[0]' });
    const pdf = { ...base, messages: [{ role: 'user' as const, content: [{ type: 'file' as const, file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' } }] }] };
    expect(translate('anthropic', pdf)).toMatchObject({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' } }] }] });
    expect(translate('google', pdf)).toMatchObject({ contents: [{ parts: [{ inlineData: { mimeType: 'application/pdf', data: 'JVBE' } }] }] });
    const fileId = { ...base, messages: [{ role: 'user' as const, content: [{ type: 'file' as const, file: { file_id: 'file-abc' } }] }] };
    expect(translate('google', fileId)).toMatchObject({ code: 'unsupported_content', param: 'messages[0].content[0]' });
  });

  it('tool call arguments that are not a JSON object are the caller\'s 400, naming them', () => {
    const request: ChatRequest = {
      ...base,
      messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: 'not json' } }] }],
    };
    expect(translate('anthropic', request)).toMatchObject({ code: 'invalid_value', param: 'messages[1].tool_calls[0].function.arguments' });
  });
});

describe('answers: every choice, tool calls, refusal, logprobs, finish reasons, usage details', () => {
  it('openai-compatible: passed on as produced, with system_fingerprint, service_tier and usage details', () => {
    const logprobs = { content: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [] }], refusal: null };
    const out = adapters.openai!.fromVendor({
      id: 'x', model: 'gpt-4o-2024-08-06', system_fingerprint: 'fp_1', service_tier: 'default',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'Hi', refusal: null, annotations: [{ type: 'url_citation' }] }, logprobs, finish_reason: 'stop' },
        { index: 1, message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' }, logprobs: null, finish_reason: 'content_filter' },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 2 } },
    }, base);
    expect(out.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'Hi', refusal: null, annotations: [{ type: 'url_citation' }] }, logprobs, finish_reason: 'stop' },
      { index: 1, message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' }, logprobs: null, finish_reason: 'content_filter' },
    ]);
    expect(out).toMatchObject({ model: 'gpt-4o-2024-08-06', systemFingerprint: 'fp_1', serviceTier: 'default' });
    expect(out.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 2 } });
  });

  it('gemini: every candidate, logprobs in OpenAI form, cached and thinking tokens', () => {
    const out = adapters.google!.fromVendor({
      candidates: [
        { index: 0, content: { role: 'model', parts: [{ text: 'thinking…', thought: true }, { text: 'A' }] }, finishReason: 'STOP',
          logprobsResult: { chosenCandidates: [{ token: 'A', logProbability: -0.5 }], topCandidates: [{ candidates: [{ token: 'A', logProbability: -0.5 }, { token: 'B', logProbability: -1 }] }] } },
        { index: 1, content: { role: 'model', parts: [{ text: 'B' }] }, finishReason: 'MAX_TOKENS' },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2, thoughtsTokenCount: 3, cachedContentTokenCount: 6, totalTokenCount: 15 },
      modelVersion: 'gemini-2.5-flash-001',
    }, base);
    expect(out.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([[0, 'A', 'stop'], [1, 'B', 'length']]);
    expect(out.choices[0]!.logprobs).toEqual({
      content: [{ token: 'A', logprob: -0.5, bytes: null, top_logprobs: [{ token: 'A', logprob: -0.5, bytes: null }, { token: 'B', logprob: -1, bytes: null }] }],
      refusal: null,
    });
    expect(out.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 6 }, completion_tokens_details: { reasoning_tokens: 3 } });
    expect(out.model).toBe('gemini-2.5-flash-001');
  });

  it('anthropic: cache reads are cached prompt tokens; thinking blocks are not content', () => {
    const out = adapters.anthropic!.fromVendor({
      model: 'claude-sonnet-4-5-20250929', stop_reason: 'end_turn',
      content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }, { type: 'text', text: 'Hi' }],
      usage: { input_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 0, output_tokens: 2 },
    }, base);
    expect(out.choices).toEqual([{ index: 0, message: { role: 'assistant', content: 'Hi', refusal: null }, logprobs: null, finish_reason: 'stop' }]);
    expect(out.usage).toEqual({ prompt_tokens: 105, completion_tokens: 2, total_tokens: 107, prompt_tokens_details: { cached_tokens: 100 } });
  });
});
