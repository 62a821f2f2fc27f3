// The playground's code editor: CodeMirror 6 with YAML or JSON highlighting (whichever the
// text is), problems underlined at their lines with the message on hover, and completion
// from a function the page supplies. This module and CodeMirror are bundled into one file by
// scripts/build-ui.mjs (esbuild), which replaces tsc's output of it; the other modules load
// it as `./code-editor.js` like any of their siblings.
import { autocompletion, completionKeymap, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { json } from '@codemirror/lang-json';
import { yaml } from '@codemirror/lang-yaml';
import { bracketMatching, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { Compartment, EditorSelection, EditorState } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from '@codemirror/view';
import { classHighlighter } from '@lezer/highlight';
import type { Suggestions } from './suggestions.js';

export interface Problem {
  /** 1-based line, or null for a problem of the whole config (listed, not underlined). */
  line: number | null;
  message: string;
}

export interface CodeEditorOptions {
  parent: HTMLElement;
  text: string;
  /** Id of the element that labels the editor for screen readers. */
  labelledBy: string;
  describedBy?: string;
  /** The page's CSP nonce for the style elements CodeMirror injects (styles are 'self' or nonced). */
  nonce?: string;
  onChange(text: string): void;
  /** What to offer at `pos`, or null for nothing; `explicit` when asked with Ctrl-Space. */
  suggest(text: string, pos: number, explicit: boolean): Suggestions | null;
}

export interface CodeEditor {
  readonly text: string;
  setText(text: string): void;
  setProblems(problems: Problem[]): void;
  /** Focuses the editor with the line selected and scrolled into view. */
  selectLine(line: number): void;
  focus(): void;
  /** Removes the editor and the listeners it keeps on the window. */
  destroy(): void;
}

const looksLikeJson = (text: string) => /^\s*[{[]/.test(text);

export function createCodeEditor(options: CodeEditorOptions): CodeEditor {
  const language = new Compartment();
  const languageFor = (text: string) => (looksLikeJson(text) ? json() : yaml());
  const complete = (context: CompletionContext): CompletionResult | null => {
    const found = options.suggest(context.state.doc.toString(), context.pos, context.explicit);
    return found && found.options.length > 0 ? { from: found.from, options: found.options, validFor: /^[\w-]*$/ } : null;
  };

  const view = new EditorView({
    parent: options.parent,
    state: EditorState.create({
      doc: options.text,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        drawSelection(),
        history(),
        indentOnInput(),
        bracketMatching(),
        EditorState.tabSize.of(2),
        language.of(languageFor(options.text)),
        // Token classes (tok-keyword, tok-string, ...) styled in editor.css, light and dark.
        syntaxHighlighting(classHighlighter),
        autocompletion({ override: [complete], icons: false }),
        lintGutter(),
        // Tab indents; Escape then Tab moves focus on (CodeMirror's tab-focus mode), so the
        // keyboard is never trapped.
        keymap.of([...completionKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
        options.nonce ? EditorView.cspNonce.of(options.nonce) : [],
        EditorView.contentAttributes.of({
          'aria-labelledby': options.labelledBy,
          ...(options.describedBy ? { 'aria-describedby': options.describedBy } : {}),
          spellcheck: 'false',
          autocapitalize: 'off',
          autocorrect: 'off',
        }),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          const text = update.state.doc.toString();
          // Switch highlighting when the text turns from YAML into JSON or back.
          if (looksLikeJson(text) !== looksLikeJson(update.startState.doc.toString())) {
            update.view.dispatch({ effects: language.reconfigure(languageFor(text)) });
          }
          options.onChange(text);
        }),
      ],
    }),
  });

  function lineBounds(line: number): { from: number; to: number } {
    const { doc } = view.state;
    const target = doc.line(Math.min(Math.max(1, line), doc.lines));
    const indent = /^\s*/.exec(target.text)![0].length;
    return { from: target.from + Math.min(indent, target.length), to: target.to };
  }

  return {
    get text() {
      return view.state.doc.toString();
    },
    setText(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    setProblems(problems) {
      const diagnostics: Diagnostic[] = problems
        .filter((p): p is Problem & { line: number } => p.line !== null)
        .map((p) => ({ ...lineBounds(p.line), severity: 'error', message: p.message }));
      view.dispatch(setDiagnostics(view.state, diagnostics));
      view.contentDOM.setAttribute('aria-invalid', String(problems.length > 0));
    },
    selectLine(line) {
      const target = view.state.doc.line(Math.min(Math.max(1, line), view.state.doc.lines));
      view.dispatch({ selection: EditorSelection.single(target.from, target.to), scrollIntoView: true });
      view.focus();
    },
    focus() {
      view.focus();
    },
    destroy() {
      view.destroy();
    },
  };
}
