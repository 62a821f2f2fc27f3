// A yes/no question in a modal <dialog>: the browser traps focus inside it, Escape cancels,
// and focus returns to what opened it.
import { h } from './dom.js';

/** Resolves true when the person chooses `action`, false on Cancel or Escape. */
export function confirmAction(question: string, detail: string, action: string): Promise<boolean> {
  return new Promise((resolve) => {
    const opener = document.activeElement as HTMLElement | null;
    const yes = h('button', { type: 'button', class: 'danger' }, action);
    const no = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
    const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': 'confirm-title', 'aria-describedby': 'confirm-detail' },
      h('h2', { id: 'confirm-title' }, question),
      h('p', { id: 'confirm-detail' }, detail),
      h('div', { class: 'dialog-actions' }, no, yes),
    );
    let answer = false;
    yes.addEventListener('click', () => {
      answer = true;
      dialog.close();
    });
    no.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => {
      dialog.remove();
      opener?.focus();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    no.focus(); // the safe choice first
  });
}
