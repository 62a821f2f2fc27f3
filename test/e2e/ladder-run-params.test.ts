// A ladder run accepts only what a ladder can honour: the members a single model call would take
// (tools, n > 1, response_format, sampling settings) are 400 unsupported_parameter naming the
// member, before any run starts; the no-op members and neutral values are accepted (issue 9).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkLadderRunRequest } from '../../src/schemas/ladder-run.js';
import { minimalLadder } from '../ladders/examples.js';
import { ask, instanceCount, runLadder, saveLadder, startHarness, userWithOpenAI, type Harness, type User } from './ladder-harness.js';

const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];

describe('what a ladder run accepts', () => {
  let h: Harness;
  let user: User;

  beforeAll(async () => {
    h = await startHarness();
    user = await userWithOpenAI(h);
    await saveLadder(h, user, 'minimal', minimalLadder);
  });
  afterAll(() => h.close());
  beforeEach(() => h.fake.reset());

  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['tools', { tools }, 'tools'],
    ['tool_choice required', { tool_choice: 'required' }, 'tool_choice'],
    ['n: 2', { n: 2 }, 'n'],
    ['a JSON schema response_format', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } } }, 'response_format'],
    ['json_object', { response_format: { type: 'json_object' } }, 'response_format'],
    ['temperature', { temperature: 0.2 }, 'temperature'],
    ['max_completion_tokens', { max_completion_tokens: 10 }, 'max_completion_tokens'],
    ['stop', { stop: 'END' }, 'stop'],
    ['seed', { seed: 1 }, 'seed'],
    ['logprobs: true', { logprobs: true }, 'logprobs'],
    ['reasoning_effort', { reasoning_effort: 'high' }, 'reasoning_effort'],
    ['parallel_tool_calls', { parallel_tool_calls: false }, 'parallel_tool_calls'],
  ];
  for (const [what, extra, param] of refused) {
    it(`refuses ${what}: 400 unsupported_parameter naming ${param}, and starts no run`, async () => {
      const before = await instanceCount(h);
      const res = await runLadder(h, user, 'minimal', ask('Hi', extra));
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_parameter', param });
      expect(res.json().error.message).toContain(`A ladder run cannot honour \`${param}\``);
      expect(await instanceCount(h)).toBe(before);
      expect(h.fake.requests).toEqual([]);
    });
  }

  it('refuses tool turns in messages, naming them', async () => {
    const calls = [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }];
    const withCalls = await runLadder(h, user, 'minimal', {
      ...ask('Hi'),
      messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: null, tool_calls: calls }, { role: 'tool', tool_call_id: 'c1', content: '1' }],
    });
    expect(withCalls.statusCode).toBe(400);
    expect(withCalls.json().error).toMatchObject({ code: 'unsupported_parameter', param: 'messages[1].tool_calls' });
  });

  it('an unknown member is 400 unknown_parameter', async () => {
    const res = await runLadder(h, user, 'minimal', ask('Hi', { foo: 1 }));
    expect(res.json().error).toMatchObject({ code: 'unknown_parameter', param: 'foo' });
  });

  it('accepts the no-op members, neutral values, nulls and developer messages', async () => {
    const res = await runLadder(h, user, 'minimal', {
      ...ask('What is 2+2?', {
        user: 'u1', metadata: { a: 'b' }, store: false, service_tier: 'auto', prompt_cache_key: 'k', safety_identifier: 's',
        n: 1, logprobs: false, response_format: { type: 'text' }, tool_choice: 'none', temperature: null, stream: false,
      }),
      messages: [{ role: 'developer', content: 'Be brief.' }, { role: 'user', content: 'What is 2+2?' }],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().choices).toEqual([{ index: 0, message: { role: 'assistant', content: expect.any(String), refusal: null }, logprobs: null, finish_reason: 'stop' }]);
  });
});

describe('checkLadderRunRequest, as the background-run endpoint reuses it', () => {
  it('names the first member a ladder cannot honour', () => {
    expect(() => checkLadderRunRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], top_p: 0.5 })).toThrow(expect.objectContaining({ code: 'unsupported_parameter', param: 'top_p' }));
    expect(() => checkLadderRunRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], knobs: { a: 1 }, user: 'u' })).not.toThrow();
  });
});
