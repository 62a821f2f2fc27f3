// The answer to a model none of the caller's connections serves: 404 model_not_found, as OpenAI
// answers an unknown model (the SDKs raise NotFoundError), saying what would serve it.
import { ApiError } from '../errors.js';
import { explicitSelection, providerCatalog, servesModel } from './catalog.js';

/** Catalog providers that accept any model name; a connection to one of them serves every model. */
const ANY_MODEL = providerCatalog.filter((e) => e.models.kind === 'any').map((e) => e.id);

/** `reason` names the model and the connections the caller has; this adds which providers would serve it. */
export function modelNotFound(model: string, reason: string): ApiError {
  let advice = '';
  if (!explicitSelection(model)) {
    const servers = providerCatalog.filter((e) => e.models.kind !== 'any' && servesModel(e, model)).map((e) => e.id);
    advice = servers.length > 0
      ? ` It is served by ${servers.join(', ')}: add a connection with POST /v1/providers.`
      : ` No provider in the catalog serves that name by itself; a connection to ${ANY_MODEL.join(', ')} passes any model name on.`;
  }
  return new ApiError(404, 'invalid_request_error', 'model_not_found', `${reason}${advice}`, 'model');
}
