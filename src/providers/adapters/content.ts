// Helpers shared by the adapters that must rebuild OpenAI message content in another shape.
import { invalidRequest } from '../../errors.js';
import type { ChatMessage, ContentPart } from '../types.js';

export interface DataUrl {
  mediaType: string;
  data: string;
}

/** Splits `data:<type>;base64,<data>`; null for anything else (only base64 data URLs are images here). */
export function parseDataUrl(url: string): DataUrl | null {
  if (!url.startsWith('data:')) return null;
  const comma = url.indexOf(',');
  if (comma < 0) return null;
  const meta = url.slice(5, comma);
  if (!meta.endsWith(';base64')) return null;
  const mediaType = meta.slice(0, meta.indexOf(';'));
  return mediaType ? { mediaType, data: url.slice(comma + 1) } : null;
}

export function isHttpUrl(url: string): boolean {
  return url.startsWith('https://') || url.startsWith('http://');
}

export function partsOf(content: ChatMessage['content']): ContentPart[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

/** Text of a system message; vendors with a separate system field accept text only. */
export function systemText(message: ChatMessage, provider: string): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((part) => {
      if (part.type !== 'text') {
        throw invalidRequest('unsupported_content', `${provider}: system messages may contain text only.`, 'messages');
      }
      return part.text;
    })
    .join('\n');
}

export function unsupportedImage(provider: string, why: string) {
  return invalidRequest('unsupported_content', `${provider}: ${why}`, 'messages');
}
