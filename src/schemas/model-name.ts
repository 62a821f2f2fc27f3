// A requested model name travels into vendor requests, headers, logs and the usage ledger. No
// model is named with a control character, so one is refused before anything else happens.
import { invalidRequest } from '../errors.js';

// eslint-disable-next-line no-control-regex -- control characters are exactly what must be found
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Throws 400 invalid_characters when `model` holds NUL or another control character. */
export function checkModelName(model: string): void {
  const found = CONTROL.exec(model);
  if (!found) return;
  const code = found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
  throw invalidRequest('invalid_characters', `\`model\` contains the control character U+${code}; a model name cannot hold control characters.`, 'model');
}
