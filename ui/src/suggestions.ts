// What a completion source gives the code editor. Its own module, free of the DOM and of
// CodeMirror, so that ladder-completion.ts compiles for the server-side tests too.

export interface Suggestions {
  /** Offset where the replaced word starts. */
  from: number;
  options: Array<{ label: string; detail?: string; type?: string }>;
}
