// What a vendor other than Anthropic checks of a request made from a Messages request.
import { unsupportedContent, unsupportedParameter } from '../adapters/content.js';
import { messagesOrigin, type MessagesOrigin } from './types.js';

/**
 * For every vendor but Anthropic: throws what makes it no candidate for a request made from a
 * Messages request (the router then skips it), and returns the origin, if any.
 */
export function checkOrigin(provider: string, request: object, takesTopK: boolean): MessagesOrigin | undefined {
  const origin = messagesOrigin(request);
  if (!origin) return undefined;
  if (origin.anthropicOnly !== null) throw unsupportedContent(provider, 'messages', `cannot take this Messages request (${origin.anthropicOnly}); only Anthropic can.`);
  if (origin.topK !== undefined && !takesTopK) throw unsupportedParameter(provider, 'top_k');
  return origin;
}
