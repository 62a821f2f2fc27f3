// The published example ladders, saved through the API and run through the real provider
// router against a fake OpenAI: exact answers, prompts, usage and instance records.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { gatedTreeOfThought, minimalLadder, recursiveRefinement } from '../ladders/examples.js';
import {
  ask, echo, echoAccounting, instanceRow, MODEL, promptsReceived, runLadder, saveLadder, SI, startHarness, userWithOpenAI,
  type Harness, type User,
} from './ladder-harness.js';

const system = (config: { steps: unknown[] }, id: string) =>
  (config.steps as Array<{ id: string; systemPrompt: string }>).find((s) => s.id === id)!.systemPrompt;

describe('running the published examples', () => {
  let h: Harness;
  let user: User;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    h.fake.reset();
    user = await userWithOpenAI(h);
  });

  it('minimal: drafts, then refines the draft, and records the run', async () => {
    const saved = await saveLadder(h, user, 'minimal', minimalLadder);
    const res = await runLadder(h, user, 'minimal', {
      ...ask('What is 2+2?'),
      messages: [
        { role: 'user', content: 'an earlier question' },
        { role: 'assistant', content: 'an earlier answer' },
        { role: 'user', content: 'What is 2+2?' },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);

    const p1 = `Question: What is 2+2?\n\n${SI}\n${system(minimalLadder, 'draft')}`;
    const p2 = `Question: What is 2+2?\n\nDraft: ${echo(p1)}\n\n${SI}\n${system(minimalLadder, 'refine')}`;
    expect(promptsReceived(h.fake)).toEqual([p1, p2]);
    const { usage, spendNanos } = echoAccounting([p1, p2]);

    const instanceId = res.headers['x-ladder-instance'] as string;
    expect(instanceId).toMatch(/^[0-9a-f-]{36}$/);
    const body = res.json();
    expect(body).toEqual({
      id: `ldr-${instanceId}`,
      object: 'chat.completion',
      created: expect.any(Number),
      model: `${user.username}/minimal`,
      choices: [{ index: 0, message: { role: 'assistant', content: echo(p2), refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage,
    });
    expect(Math.abs(body.created - Date.now() / 1000)).toBeLessThan(60);

    const row = await instanceRow(h, instanceId);
    expect(row).toMatchObject({
      ladder_id: saved.id,
      ladder_version: 1,
      author: user.username,
      slug: 'minimal',
      account_id: user.id,
      api_key_id: user.keyId,
      mode: 'sync',
      model: MODEL,
      input: 'What is 2+2?',
      knobs: {},
      status: 'completed',
      answer: echo(p2),
      error: null,
      usage,
      model_calls: 2,
    });
    expect(Number(row.spend_nanos)).toBe(spendNanos);
    expect(row.started_at).not.toBeNull();
    expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at!.getTime());
    expect(row.trace).toEqual([
      { pass: 1, depth: 0, stepId: 'draft', nodes: [nodeTrace(1, p1)] },
      { pass: 1, depth: 0, stepId: 'refine', nodes: [nodeTrace(1, p2)] },
    ]);
  });

  it('minimal: runs the version current at the time, and records it', async () => {
    await saveLadder(h, user, 'versions', minimalLadder);
    await saveLadder(h, user, 'versions', { ...minimalLadder, exit: 'draft' });
    const res = await runLadder(h, user, 'versions', ask('Q'));
    expect(h.fake.requests).toHaveLength(2);
    expect(res.json().choices[0].message.content).toBe(echo(`Question: Q\n\n${SI}\n${system(minimalLadder, 'draft')}`));
    expect((await instanceRow(h, res.headers['x-ladder-instance'] as string)).ladder_version).toBe(2);
  });

  it('minimal: the last user message with content parts becomes the input, text parts joined by newlines', async () => {
    await saveLadder(h, user, 'parts', minimalLadder);
    const res = await runLadder(h, user, 'parts', {
      model: MODEL,
      messages: [
        { role: 'system', content: 'ignored by the ladder' },
        { role: 'user', content: [{ type: 'text', text: 'line one' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }, { type: 'text', text: 'line two' }] },
      ],
    });
    expect(res.statusCode).toBe(200);
    expect(promptsReceived(h.fake)[0]).toBe(`Question: line one\nline two\n\n${SI}\n${system(minimalLadder, 'draft')}`);
    expect((await instanceRow(h, res.headers['x-ladder-instance'] as string)).input).toBe('line one\nline two');
  });

  it('gated tree of thought: judges prune the thoughts, the answer reads the survivors', async () => {
    await saveLadder(h, user, 'tot', gatedTreeOfThought, { usage_visibility: 'public' });
    const echoStep = { kind: 'delay', ms: 0 } as const;
    h.fake.script(echoStep, echoStep, echoStep, { kind: 'reply', content: 'YES' }, { kind: 'reply', content: 'NO' }, { kind: 'reply', content: ' YES\n' });
    const res = await runLadder(h, user, 'tot', ask('P'));
    expect(res.statusCode, res.body).toBe(200);

    const think = [1, 2, 3].map((k) => `Problem: P\n\nThought number: ${k}\n\n${SI}\n${system(gatedTreeOfThought, 'think')}`);
    const thoughts = think.map(echo).map((t, i) => `Thought ${i + 1}: ${t}`).join('\n');
    const judge = [1, 2, 3].map((k) => `Problem: P\n\n${thoughts}\n\nThought to judge: ${k}\n\n${SI}\n${system(gatedTreeOfThought, 'judge')}`);
    const answer = `Problem: P\n\n${thoughts}\n\nVerdict 1: YES\nVerdict 3:  YES\n\n\n${SI}\n${system(gatedTreeOfThought, 'answer')}`;
    expect(promptsReceived(h.fake)).toEqual([...think, ...judge, answer]);
    expect(res.json().choices[0].message.content).toBe(echo(answer));

    // Scripted replies count no prompt tokens and their length as completion tokens.
    const echoes = echoAccounting([...think, answer]).usage;
    const judged = 'YES'.length + 'NO'.length + ' YES\n'.length;
    const usage = { prompt_tokens: echoes.prompt_tokens, completion_tokens: echoes.completion_tokens + judged, total_tokens: echoes.total_tokens + judged };
    expect(res.json().usage).toEqual(usage);

    const row = await instanceRow(h, res.headers['x-ladder-instance'] as string);
    expect(row).toMatchObject({ status: 'completed', knobs: { thoughts: 3 }, usage, model_calls: 7 });
    expect(row.trace!.map((s) => [s.stepId, s.nodes.map((n) => n.survived)])).toEqual([
      ['think', [true, true, true]],
      ['judge', [true, false, true]],
      ['answer', [true]],
    ]);
    expect(row.trace![1]!.nodes.map((n) => n.output)).toEqual(['YES', 'NO', ' YES\n']);
  });

  it('gated tree of thought: another account runs a public ladder on its own connections, billed to itself', async () => {
    await saveLadder(h, user, 'shared', gatedTreeOfThought, { usage_visibility: 'public' });
    const caller = await userWithOpenAI(h);
    const res = await runLadder(h, caller, 'shared', ask('P', { knobs: { thoughts: 2 } }), user.username);
    expect(res.statusCode).toBe(200);
    expect(res.json().model).toBe(`${user.username}/shared`);
    expect(h.fake.requests).toHaveLength(5);
    const row = await instanceRow(h, res.headers['x-ladder-instance'] as string);
    expect(row).toMatchObject({ author: user.username, account_id: caller.id, api_key_id: caller.keyId, knobs: { thoughts: 2 } });
  });

  it('recursive refinement: two passes, one recursion level each, sequential critique', async () => {
    await saveLadder(h, user, 'refine', recursiveRefinement);
    const res = await runLadder(h, user, 'refine', ask('T'));
    expect(res.statusCode, res.body).toBe(200);
    const prompts = promptsReceived(h.fake);
    const sys = (id: string) => system(recursiveRefinement, id);
    const stepOf = (p: string) => recursiveRefinement.steps.find((s) => 'systemPrompt' in s && p.endsWith(`${SI}\n${s.systemPrompt}`))!.id;
    expect(prompts.map(stepOf)).toEqual([
      'draft', 'deepen', 'draft', 'deepen', 'critique', 'critique', 'polish', 'critique', 'critique', 'polish',
      'draft', 'deepen', 'draft', 'deepen', 'critique', 'critique', 'polish', 'critique', 'critique', 'polish',
    ]);
    expect(prompts[0]).toBe(`Task: T\n\nPrevious answer: \n\n${SI}\n${sys('draft')}`);
    expect(prompts[1]).toBe(`Draft: ${echo(prompts[0]!)}\n\n${SI}\n${sys('deepen')}`);
    // The child run (depth 1) starts from the root's deepen output.
    expect(prompts[2]).toBe(`Task: ${echo(prompts[1]!)}\n\nPrevious answer: \n\n${SI}\n${sys('draft')}`);
    expect(prompts[4]).toBe(`Answer: ${echo(prompts[3]!)}\n\nEarlier critique: \n\nPass count: 2\n\n${SI}\n${sys('critique')}`);
    expect(prompts[5]).toBe(`Answer: ${echo(prompts[3]!)}\n\nEarlier critique: ${echo(prompts[4]!)}\n\nPass count: 2\n\n${SI}\n${sys('critique')}`);
    // Back at the root, the child's answer (its polish) replaced the deepen output.
    expect(prompts[7]).toBe(`Answer: ${echo(prompts[6]!)}\n\nEarlier critique: \n\nPass count: 2\n\n${SI}\n${sys('critique')}`);
    expect(prompts[10]).toBe(`Task: T\n\nPrevious answer: ${echo(prompts[9]!)}\n\n${SI}\n${sys('draft')}`);

    const { usage, spendNanos } = echoAccounting(prompts);
    expect(res.json().usage).toEqual(usage);
    expect(res.json().choices[0].message.content).toBe(echo(prompts[19]!));
    const row = await instanceRow(h, res.headers['x-ladder-instance'] as string);
    expect(row).toMatchObject({ status: 'completed', knobs: { passes: 2, depth: 1 }, usage, model_calls: 20, answer: echo(prompts[19]!) });
    expect(Number(row.spend_nanos)).toBe(spendNanos);
    expect(row.trace!.map((s) => `${s.pass}/${s.depth}/${s.stepId}`)).toEqual([
      '1/0/draft', '1/0/deepen', '1/1/draft', '1/1/deepen', '1/1/critique', '1/1/polish', '1/0/critique', '1/0/polish',
      '2/0/draft', '2/0/deepen', '1/1/draft', '1/1/deepen', '1/1/critique', '1/1/polish', '2/0/critique', '2/0/polish',
    ]);
    expect(row.trace![1]!.recursionAnswer).toBe(echo(prompts[6]!));
    // Long prompts are cut in the trace, with their full length kept.
    const polish = row.trace![15]!.nodes[0]!;
    expect(polish.promptChars).toBe(prompts[19]!.length);
    expect(polish.prompt).toBe(prompts[19]!.slice(0, 4000));
  });
});

function nodeTrace(node: number, prompt: string) {
  const usage = { prompt_tokens: prompt.length, completion_tokens: echo(prompt).length, total_tokens: prompt.length + echo(prompt).length };
  return {
    node,
    prompt,
    promptChars: prompt.length,
    output: echo(prompt),
    outputChars: echo(prompt).length,
    survived: true,
    usage,
    costNanos: usage.prompt_tokens * 150 + usage.completion_tokens * 600, // $0.15 and $0.60 per million: whole nanos a token
    provider: 'openai',
    latencyMs: expect.any(Number),
  };
}

describe('a group and a gate that prunes everything', () => {
  let h: Harness;
  let user: User;

  beforeAll(async () => {
    h = await startHarness();
    user = await userWithOpenAI(h);
  });
  afterAll(() => h.close());

  it('runs group children side by side, and downstream reads an empty gate as empty', async () => {
    const config = {
      name: 'Views',
      exit: 'summary',
      steps: [
        {
          id: 'views',
          name: 'Views',
          type: 'group',
          steps: [
            { id: 'pro', name: 'Pro', type: 'normal', fields: [{ name: 'Topic', type: 'text', from: 'input.context' }], systemPrompt: 'Argue for.' },
            { id: 'con', name: 'Con', type: 'normal', fields: [{ name: 'Topic', type: 'text', from: 'input.context' }], systemPrompt: 'Argue against.' },
          ],
        },
        {
          id: 'check',
          name: 'Check',
          type: 'normal',
          nodes: 2,
          continueIf: 'OK',
          fields: [{ name: 'Pro', type: 'ingest', from: { stepId: 'pro' } }, { name: 'Node', type: 'nodeInfo' }],
        },
        {
          id: 'summary',
          name: 'Summary',
          type: 'normal',
          fields: [
            { name: 'Con', type: 'ingest', from: { stepId: 'con' } },
            { name: 'Checked', type: 'multi_ingest', from: { stepId: 'check', nodeRef: 'accumulate' } },
            { name: 'Last check', type: 'ingest', from: { stepId: 'check' } },
          ],
          systemPrompt: 'Summarise.',
        },
      ],
    };
    await saveLadder(h, user, 'views', config);
    const res = await runLadder(h, user, 'views', ask('cats'));
    expect(res.statusCode, res.body).toBe(200);
    const pro = `Topic: cats\n\n${SI}\nArgue for.`;
    const con = `Topic: cats\n\n${SI}\nArgue against.`;
    const check = (n: number) => `Pro: ${echo(pro)}\n\nNode: ${n}`;
    const summary = `Con: ${echo(con)}\n\nLast check: \n\n${SI}\nSummarise.`;
    expect(promptsReceived(h.fake)).toEqual([pro, con, check(1), check(2), summary]);
    expect(res.json().choices[0].message.content).toBe(echo(summary));
    expect(res.json().usage).toEqual(echoAccounting([pro, con, check(1), check(2), summary]).usage);
    const row = await instanceRow(h, res.headers['x-ladder-instance'] as string);
    expect(row.trace!.map((s) => [s.stepId, s.groupId ?? null, s.nodes.map((n) => n.survived)])).toEqual([
      ['pro', 'views', [true]],
      ['con', 'views', [true]],
      ['check', null, [false, false]],
      ['summary', null, [true]],
    ]);
  });
});
