// What a rerun matches recorded calls by: the model and the whole prompt, hashed, so that a
// checkpoint can say what was asked without keeping the prompt (docs/pipelines.md, "Rerun").
import { createHash } from 'node:crypto';

/** SHA-256 (hex) of the model and the whole prompt, as the one user message the vendor is sent. */
export function promptHash(model: string, prompt: string): string {
  return createHash('sha256').update(JSON.stringify([model, prompt])).digest('hex');
}
