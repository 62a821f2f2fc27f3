// Input items: checked kind by kind (precise 400s), given ids and one spelling each, as they
// are stored and listed by GET /v1/responses/{id}/input_items. A string input is one user message.
import { invalidRequest, missingField } from '../errors.js';
import type { InputItem, InputPart } from '../schemas/responses.js';
import { itemId } from './ids.js';

/** An input or output item in its stored form: always a `type` and an `id`. */
export type Item = Record<string, unknown> & { type: string; id: string };

type Kind = 'message' | 'function_call' | 'function_call_output' | 'reasoning';

/** Members each kind may carry besides type, id and status. */
const MEMBERS: Record<Kind, ReadonlySet<string>> = {
  message: new Set(['role', 'content', 'phase']),
  function_call: new Set(['call_id', 'name', 'arguments']),
  function_call_output: new Set(['call_id', 'output']),
  reasoning: new Set(['summary', 'encrypted_content', 'content']),
};

/** Content part types each message role may carry. */
const PARTS: Record<string, ReadonlySet<string>> = {
  user: new Set(['input_text', 'input_image', 'input_file']),
  system: new Set(['input_text']),
  developer: new Set(['input_text']),
  assistant: new Set(['output_text', 'refusal', 'input_text']),
};

/** Members each part type needs. */
const PART_NEEDS: Record<InputPart['type'], keyof InputPart> = {
  input_text: 'text',
  output_text: 'text',
  refusal: 'refusal',
  input_image: 'image_url',
  input_file: 'file_data',
};

export function normalizeInput(input: string | InputItem[]): Item[] {
  if (typeof input === 'string') return [{ id: itemId('msg'), type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: input }] }];
  return input.map((item, i) => normalizeItem(item, `input[${i}]`));
}

function normalizeItem(item: InputItem, at: string): Item {
  const kind = item.type ?? 'message';
  if (kind === 'item_reference') {
    throw invalidRequest('unsupported_parameter', `${at} is an item_reference, which is not supported: send the items themselves, or continue with previous_response_id.`, at);
  }
  const own = MEMBERS[kind];
  for (const key of Object.keys(item)) {
    if (key !== 'type' && key !== 'id' && key !== 'status' && !own.has(key)) {
      throw invalidRequest('unknown_parameter', `${at}.${key} is not a member of a ${kind} item.`, `${at}.${key}`);
    }
  }
  const id = typeof item.id === 'string' && item.id !== '' ? item.id : itemId(kind === 'message' ? 'msg' : kind === 'reasoning' ? 'rs' : kind === 'function_call' ? 'fc' : 'fco');
  switch (kind) {
    case 'message':
      return message(item, id, at);
    case 'function_call':
      for (const key of ['call_id', 'name', 'arguments'] as const) if (item[key] === undefined) throw missingField(`${at}.${key}`);
      return { id, type: kind, status: 'completed', call_id: item.call_id, name: item.name, arguments: item.arguments };
    case 'function_call_output':
      for (const key of ['call_id', 'output'] as const) if (item[key] === undefined) throw missingField(`${at}.${key}`);
      if (Array.isArray(item.output)) checkParts(item.output, PARTS.user!, `${at}.output`);
      return { id, type: kind, status: 'completed', call_id: item.call_id, output: item.output };
    case 'reasoning':
      // Kept for the record; no chat vendor takes another's reasoning back, so it is not sent on.
      return { id, type: kind, summary: item.summary ?? [], ...(item.encrypted_content ? { encrypted_content: item.encrypted_content } : {}) };
  }
}

function message(item: InputItem, id: string, at: string): Item {
  if (item.role === undefined) throw missingField(`${at}.role`);
  if (item.content === undefined) throw missingField(`${at}.content`);
  const role = item.role;
  const content = typeof item.content === 'string'
    ? [role === 'assistant' ? { type: 'output_text', text: item.content, annotations: [] } : { type: 'input_text', text: item.content }]
    : item.content;
  if (content.length === 0) throw invalidRequest('invalid_value', `${at}.content must be a string or a non-empty array of content parts.`, `${at}.content`);
  checkParts(content as InputPart[], PARTS[role]!, `${at}.content`, role);
  return { id, type: 'message', role, status: 'completed', content };
}

function checkParts(parts: InputPart[], allowed: ReadonlySet<string>, at: string, role?: string): void {
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j]!;
    const here = `${at}[${j}]`;
    if (!allowed.has(part.type)) {
      const whose = role ? `a "${role}" message` : 'a function_call_output';
      throw invalidRequest('invalid_value', `${here} is an ${part.type} part, which ${whose} cannot carry (it takes: ${[...allowed].join(', ')}).`, here);
    }
    if (part.type === 'input_image' && !part.image_url && part.file_id) {
      throw invalidRequest('unsupported_content', `${here}: file ids mean nothing here; give the image as image_url (an https URL or a data: URL).`, `${here}.file_id`);
    }
    if (part.type === 'input_file' && !part.file_data && (part.file_id || part.image_url)) {
      throw invalidRequest('unsupported_content', `${here}: give the file as file_data (a base64 data URL); file ids and URLs are not fetched.`, here);
    }
    const needs = PART_NEEDS[part.type];
    if (part[needs] === undefined || part[needs] === null) throw missingField(`${here}.${needs}`);
  }
}
