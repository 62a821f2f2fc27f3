// The playground: write a ladder config in YAML or JSON, see validation errors at their
// lines as you type, set its knobs, then save it as a new version of one of your ladders and
// run it, waiting for the answer or in the background with its live timeline.
import { api, ApiFailure, currentUsername } from './api.js';
import { savedText, saveUnlessUnchanged } from './save-ladder.js';
import { createCodeEditor, type Problem } from './code-editor.js';
import { announce, debounce, h, replaceChildren } from './dom.js';
import { count } from './format.js';
import { ladderSuggestions } from './ladder-completion.js';
import { jsonErrorPosition, lineOf, offsetOfPath, splitMessage } from './locate.js';
import { parseDocument, stringify } from './vendor/yaml/index.js';

const STORE = 'ladder.playground';
const SLUG_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const AUTHOR_RE = /^[a-z0-9](?:[a-z0-9-]{1,37})[a-z0-9]$/;

export const EXAMPLE = `name: Draft and judge
description: Drafts two answers and keeps the ones a judge accepts.
exit: answer
knobs:
  drafts:
    name: Drafts
    type: nodes
    input: slider
    steps:
      - { title: One, value: 1 }
      - { title: Two, value: 2, default: true }
      - { title: Four, value: 4 }
steps:
  - id: draft
    name: Draft
    type: normal
    nodes: "{{knobs.drafts}}"
    fields:
      - { name: Question, type: text, from: input.context }
    systemPrompt: Answer the question.
  - id: answer
    name: Answer
    type: normal
    fields:
      - { name: Question, type: text, from: input.context }
      - { name: Draft, type: multi_ingest, from: { stepId: draft, nodeRef: accumulate } }
    systemPrompt: Write the best answer from the drafts.
`;

interface Knob {
  name?: string;
  type?: string;
  steps?: Array<{ title?: string; value?: number; default?: boolean }>;
}

export function playgroundPage(main: HTMLElement): () => void {
  const saved = JSON.parse(sessionStorage.getItem(STORE) ?? '{}') as Record<string, string>;
  const editorBox = h('div', { id: 'config', class: 'code-editor' });
  const status = h('p', { id: 'config-status', role: 'status', class: 'help' });
  const errorList = h('ol', { id: 'config-errors', class: 'problems', 'aria-label': 'Problems in the config' });
  const knobBox = h('div', { class: 'knobs' });
  const ladder = h('input', { id: 'run-ladder', name: 'ladder', required: true, placeholder: 'your-username/my-ladder', value: saved.ladder ?? '', list: 'own-ladders', autocomplete: 'off', 'aria-describedby': 'ladder-help' });
  const own = h('datalist', { id: 'own-ladders' });
  const model = h('input', { id: 'run-model', name: 'model', required: true, value: saved.model ?? 'gpt-4o-mini', autocomplete: 'off' });
  const input = h('textarea', { id: 'run-input', name: 'input', rows: 4, required: true });
  input.value = saved.input ?? 'What is the capital of France?';
  const syncMode = h('input', { type: 'radio', name: 'mode', id: 'mode-sync', value: 'sync', checked: saved.mode !== 'async' });
  const asyncMode = h('input', { type: 'radio', name: 'mode', id: 'mode-async', value: 'async', checked: saved.mode === 'async' });
  const runButton = h('button', { type: 'submit' }, 'Save and run');
  const loadButton = h('button', { type: 'button', class: 'secondary' }, 'Load saved config');
  const runStatus = h('div', { class: 'run-status', role: 'status', 'aria-live': 'polite' });
  const runError = h('p', { class: 'error', role: 'alert' });

  const form = h('form', { class: 'playground', novalidate: true },
    h('div', { class: 'editor-col' },
      // Not a <label for>: the editor is not a form control; it names itself with aria-labelledby.
      h('label', { id: 'config-label', onclick: () => editor.focus() }, 'Ladder config (YAML or JSON)'),
      h('p', { id: 'config-help', class: 'help' },
        'Checked as you type: problems are underlined (hover for the message) and listed below the editor; choose one to jump to its line. ',
        'Ctrl-Space completes step ids, types and knob ids. Tab indents: press Escape, then Tab, to move on.'),
      editorBox, status, errorList,
    ),
    h('div', { class: 'side-col' },
      h('fieldset', {}, h('legend', {}, 'Knobs'), knobBox),
      h('fieldset', {},
        h('legend', {}, 'Run'),
        h('div', { class: 'field' },
          h('label', { for: 'run-ladder' }, 'Save as ladder'), ladder, own,
          h('p', { id: 'ladder-help', class: 'help' }, 'username/slug: the config becomes that ladder’s next version (or its first).'),
          loadButton),
        h('div', { class: 'field' }, h('label', { for: 'run-model' }, 'Model'), model),
        h('div', { class: 'field' }, h('label', { for: 'run-input' }, 'Input (the user message)'), input),
        h('fieldset', { class: 'inline' }, h('legend', {}, 'Wait for it?'),
          h('div', {}, syncMode, h('label', { for: 'mode-sync' }, 'Run now and wait for the answer')),
          h('div', {}, asyncMode, h('label', { for: 'mode-async' }, 'Run in the background and watch its timeline')),
        ),
        runButton, runError, runStatus,
      ),
    ),
  );
  main.replaceChildren(h('h1', { tabindex: '-1' }, 'Playground'), form);
  const editor = createCodeEditor({
    parent: editorBox,
    text: saved.config ?? EXAMPLE,
    labelledBy: 'config-label',
    describedBy: 'config-help config-status',
    nonce: document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content || undefined,
    onChange: () => {
      status.textContent = 'Typing…';
      scheduleCheck();
    },
    suggest: (text, pos) => ladderSuggestions(text, pos, (source) => parseDocument(source)),
  });

  let parsed: unknown = undefined;
  let problems: Problem[] = [];
  let checking: AbortController | null = null;

  const remember = () =>
    sessionStorage.setItem(STORE, JSON.stringify({ config: editor.text, ladder: ladder.value, model: model.value, input: input.value, mode: asyncMode.checked ? 'async' : 'sync' }));

  /** Parses the text; syntax errors are located problems. */
  function parseText(text: string): { value?: unknown; problems: Problem[] } {
    const trimmed = text.trim();
    if (!trimmed) return { problems: [{ line: null, message: 'The config is empty.' }] };
    if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
      try {
        return { value: JSON.parse(text), problems: [] };
      } catch (error) {
        const message = (error as Error).message;
        return { problems: [{ line: jsonErrorPosition(text, message)?.line ?? null, message: `JSON syntax: ${message}` }] };
      }
    }
    const doc = parseDocument(text, { prettyErrors: false });
    if (doc.errors.length > 0) {
      return { problems: doc.errors.map((e) => ({ line: e.linePos?.[0]?.line ?? lineOf(text, e.pos[0]).line, message: `YAML syntax: ${e.message.split('\n')[0]}` })) };
    }
    return { value: doc.toJS(), problems: [] };
  }

  function locate(text: string, errors: string[]): Problem[] {
    const doc = parseDocument(text);
    return errors.map((message) => {
      const split = splitMessage(message);
      return { line: split ? lineOf(text, offsetOfPath(doc, split.path)).line : null, message };
    });
  }

  async function check(): Promise<void> {
    checking?.abort();
    const abort = (checking = new AbortController());
    const text = editor.text;
    remember();
    const result = parseText(text);
    parsed = result.value;
    if (result.problems.length > 0) return show(result.problems);
    status.textContent = 'Checking…';
    try {
      const { body } = await api<{ valid: boolean; errors: string[] }>('POST', '/v1/validate', { config: parsed }, { signal: abort.signal });
      if (abort.signal.aborted) return;
      show(locate(text, body.errors));
      renderKnobs(parsed);
    } catch (failure) {
      if ((failure as Error).name === 'AbortError') return;
      show([{ line: null, message: `Cannot check the config: ${(failure as Error).message}` }]);
    }
  }

  function show(found: Problem[]): void {
    problems = found;
    editor.setProblems(found);
    status.textContent = found.length === 0 ? '✓ Valid: ready to save and run.' : `✗ ${found.length} problem${found.length === 1 ? '' : 's'} in the config:`;
    status.className = found.length === 0 ? 'help ok' : 'help error';
    replaceChildren(errorList, ...found.map((p) =>
      h('li', {},
        p.line !== null ? h('button', { type: 'button', class: 'link', onclick: () => editor.selectLine(p.line!) }, `Line ${p.line}`) : null,
        p.line !== null ? ': ' : '',
        p.message),
    ));
  }

  const knobValues = new Map<string, number>();
  function renderKnobs(config: unknown): void {
    const knobs = (config as { knobs?: Record<string, Knob> } | null)?.knobs;
    const entries = Object.entries(knobs && typeof knobs === 'object' ? knobs : {}).filter(([, k]) => Array.isArray(k?.steps) && k.steps.length > 0);
    // Only knobs this config declares are sent with a run.
    for (const id of [...knobValues.keys()]) if (!entries.some(([k]) => k === id)) knobValues.delete(id);
    if (entries.length === 0) {
      replaceChildren(knobBox, h('p', { class: 'help' }, 'This config declares no knobs.'));
      return;
    }
    replaceChildren(knobBox, ...entries.map(([id, knob]) => {
      const steps = knob.steps!.filter((s) => typeof s.value === 'number').sort((a, b) => a.value! - b.value!);
      const defaultIndex = Math.max(0, steps.findIndex((s) => s.default === true));
      const current = knobValues.has(id) ? steps.findIndex((s) => s.value === knobValues.get(id)) : -1;
      const index = current >= 0 ? current : defaultIndex;
      const describe = (i: number) => `${steps[i]?.title ?? ''} (${steps[i]?.value})`;
      const slider = h('input', { type: 'range', id: `knob-${id}`, min: 0, max: steps.length - 1, step: 1, value: index, 'aria-valuetext': describe(index) });
      const output = h('output', { for: `knob-${id}` }, describe(index));
      knobValues.set(id, steps[index]!.value!);
      slider.addEventListener('input', () => {
        const i = Number(slider.value);
        knobValues.set(id, steps[i]!.value!);
        output.textContent = describe(i);
        slider.setAttribute('aria-valuetext', describe(i));
      });
      return h('div', { class: 'field' },
        h('label', { for: `knob-${id}` }, `${knob.name ?? id} `, h('span', { class: 'muted' }, `(${knob.type ?? 'knob'}, ${steps[0]!.value} to ${steps.at(-1)!.value})`)),
        slider, output);
    }));
  }

  const scheduleCheck = debounce(() => {
    void check();
  }, 400);
  for (const el of [ladder, model, input, syncMode, asyncMode]) el.addEventListener('change', remember);

  const listOwn = debounce(async () => {
    const author = ladder.value.split('/')[0] ?? '';
    if (!AUTHOR_RE.test(author)) return;
    try {
      const { body } = await api<{ data: Array<{ author: string; slug: string }> }>('GET', `/v1/${author}`);
      replaceChildren(own, ...body.data.map((l) => h('option', { value: `${l.author}/${l.slug}` })));
    } catch {
      // Only a convenience.
    }
  }, 500);
  ladder.addEventListener('input', listOwn);

  function target(): { author: string; slug: string } | null {
    const [author = '', slug = '', extra] = ladder.value.trim().split('/');
    if (extra !== undefined || !AUTHOR_RE.test(author) || !SLUG_RE.test(slug)) return null;
    return { author, slug };
  }

  loadButton.addEventListener('click', async () => {
    runError.textContent = '';
    const where = target();
    if (!where) return void fail('Enter the ladder as username/slug.', ladder);
    try {
      const { body } = await api<{ config?: unknown; version: number }>('GET', `/v1/${where.author}/${where.slug}`);
      if (!body.config) return void fail('That ladder’s config is not visible to you.', ladder);
      // Changing the text checks it, as typing does.
      editor.setText(stringify(body.config));
      announce(`Loaded version ${body.version} of ${where.author}/${where.slug}.`);
    } catch (failure) {
      fail((failure as Error).message, ladder);
    }
  });

  function fail(message: string, focus?: { focus(): void }): void {
    runError.textContent = message;
    focus?.focus();
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    runError.textContent = '';
    runStatus.replaceChildren();
    await check();
    if (parsed === undefined || problems.length > 0) return void fail('Fix the problems in the config first.', editor);
    const where = target();
    if (!where) return void fail('Enter the ladder to save as: username/slug (lowercase letters, digits, - and _).', ladder);
    if (!model.value.trim()) return void fail('Enter a model.', model);
    if (!input.value.trim()) return void fail('Enter an input for the run.', input);
    remember();
    runButton.disabled = true;
    const knobs = Object.fromEntries(knobValues);
    const messages = [{ role: 'user', content: input.value }];
    try {
      runStatus.textContent = 'Saving…';
      const savedLadder = await saveUnlessUnchanged(where, parsed);
      if (asyncMode.checked) {
        runStatus.textContent = `${savedText(savedLadder)} Starting…`;
        const { body } = await api<{ instanceId: string }>('POST', '/v1/pipelines/instances', { author: where.author, template: where.slug, model: model.value.trim(), messages, knobs });
        announce('Run started in the background.');
        location.hash = `#/runs/${body.instanceId}`;
        return;
      }
      runStatus.textContent = `${savedText(savedLadder)} Running… (the answer shows here when the run ends)`;
      const { body, headers } = await api<{ choices: Array<{ message: { content: string } }>; usage: { total_tokens: number } }>(
        'POST', `/v1/${where.author}/${where.slug}/chat/completions`, { model: model.value.trim(), messages, knobs },
      );
      const instanceId = headers.get('x-ladder-instance');
      replaceChildren(runStatus,
        h('h2', {}, '✓ Completed'),
        h('pre', { class: 'answer', id: 'run-answer' }, body.choices[0]?.message.content ?? ''),
        h('p', { class: 'help' }, `Version ${savedLadder.version}${savedLadder.saved ? '' : ' (unchanged, not saved again)'}, ${count(body.usage.total_tokens)} tokens.`),
        instanceId ? h('p', {}, h('a', { href: `#/runs/${instanceId}` }, 'Open its timeline')) : null,
      );
    } catch (failure) {
      runStatus.textContent = '';
      const f = failure as ApiFailure;
      fail(f.code === 'invalid_ladder_config' ? f.message : `The run failed: ${f.message}${f.code ? ` (${f.code})` : ''}`);
    } finally {
      runButton.disabled = false;
    }
  });

  // "Save as" starts as the signed-in account's own ladder, named after the config.
  void currentUsername().then((username) => {
    const author = ladder.value.split('/')[0];
    if (!username || (ladder.value && author === username)) return;
    const name = (parsed as { name?: unknown } | undefined)?.name;
    const slug = (typeof name === 'string' ? name : 'my-ladder').toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64) || 'my-ladder';
    ladder.value = `${username}/${slug}`;
    remember();
  });

  void check();
  return () => {
    checking?.abort();
    editor.destroy();
  };
}

