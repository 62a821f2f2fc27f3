// "Run again": reruns a finished run (POST /v1/pipelines/instances/{id}/rerun) with another
// saved version, model or knob values, or as it was. Calls the new run shares with this one
// (same model, same whole prompt) are reused rather than paid for again; the new run's page
// says how many.
import { api, ApiFailure, type Instance } from './api.js';
import { announce, h } from './dom.js';

export function rerunForm(instance: Instance): HTMLElement {
  const version = h('input', { id: 'rerun-version', name: 'version', type: 'number', min: 1, step: 1, required: true, value: instance.version, 'aria-describedby': 'rerun-version-help' });
  const versionHelp = h('p', { id: 'rerun-version-help', class: 'help' }, `This run used version ${instance.version}.`);
  const model = h('input', { id: 'rerun-model', name: 'model', required: true, value: instance.model, autocomplete: 'off' });
  const knobs = Object.entries(instance.knobs ?? {}).map(([id, value]) => ({
    id,
    input: h('input', { id: `rerun-knob-${id}`, name: id, type: 'number', step: 'any', required: true, value }),
  }));
  const submit = h('button', { type: 'submit' }, 'Run again');
  const error = h('p', { class: 'error', role: 'alert' });
  const status = h('p', { class: 'help', role: 'status' });

  // The latest saved version, so that an author who just saved a fix sees which number to pick.
  void api<{ version: number }>('GET', `/v1/${instance.author}/${instance.template}`).then(
    ({ body }) => {
      if (body.version !== instance.version) versionHelp.textContent = `This run used version ${instance.version}; the latest is ${body.version}.`;
    },
    () => {},
  );

  const form = h('form', { class: 'rerun card', novalidate: true, 'aria-labelledby': 'rerun-heading' },
    h('h2', { id: 'rerun-heading' }, 'Run again'),
    h('p', { class: 'help' }, 'Same input. Every call whose model and whole prompt match one of this run’s is reused: not sent, not paid for again.'),
    h('div', { class: 'rerun-fields' },
      h('div', { class: 'field' }, h('label', { for: 'rerun-version' }, 'Version'), version, versionHelp),
      h('div', { class: 'field' }, h('label', { for: 'rerun-model' }, 'Model'), model),
      ...knobs.map(({ id, input }) => h('div', { class: 'field' }, h('label', { for: input.id }, `Knob ${id}`), input)),
    ),
    submit, error, status,
  );

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    const body: Record<string, unknown> = {};
    const chosen = Number(version.value);
    if (!Number.isInteger(chosen) || chosen < 1) return void fail('Enter a saved version number (1 or more).', version);
    if (chosen !== instance.version) body.version = chosen;
    if (!model.value.trim()) return void fail('Enter a model.', model);
    if (model.value.trim() !== instance.model) body.model = model.value.trim();
    const changed: Record<string, number> = {};
    for (const { id, input } of knobs) {
      const value = Number(input.value);
      if (input.value.trim() === '' || !Number.isFinite(value)) return void fail(`Enter a number for knob ${id}.`, input);
      if (value !== instance.knobs[id]) changed[id] = value;
    }
    if (Object.keys(changed).length > 0) body.knobs = changed;
    submit.disabled = true;
    status.textContent = 'Starting…';
    try {
      const { body: started } = await api<{ instanceId: string }>('POST', `/v1/pipelines/instances/${instance.instanceId}/rerun`, body);
      announce('Run started again.');
      location.hash = `#/runs/${started.instanceId}`;
    } catch (failure) {
      status.textContent = '';
      const f = failure as ApiFailure;
      fail(`Cannot run again: ${f.message}`, f.param === 'model' ? model : f.code === 'ladder_version_not_found' ? version : null);
    } finally {
      submit.disabled = false;
    }
  });

  function fail(message: string, field: HTMLInputElement | null = null): void {
    error.textContent = message;
    field?.focus();
  }

  return form;
}
