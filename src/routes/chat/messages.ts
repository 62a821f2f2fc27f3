// The role-specific rules of OpenAI's messages, which one JSON schema per message cannot say
// without turning every mistake into a vague "does not match any role".
import { invalidRequest, missingField } from '../../errors.js';
import type { RequestMessage } from '../../schemas/chat-messages.js';

/** Content part types each role may carry. */
const PARTS: Record<RequestMessage['role'], ReadonlySet<string>> = {
  developer: new Set(['text']),
  system: new Set(['text']),
  user: new Set(['text', 'image_url', 'input_audio', 'file']),
  assistant: new Set(['text', 'refusal']),
  tool: new Set(['text']),
  function: new Set(['text']),
};

/** Members only one role may carry. */
const OWNER: Array<[keyof RequestMessage, RequestMessage['role']]> = [
  ['tool_calls', 'assistant'],
  ['refusal', 'assistant'],
  ['audio', 'assistant'],
  ['function_call', 'assistant'],
  ['tool_call_id', 'tool'],
];

export function checkMessages(messages: RequestMessage[]): void {
  for (let i = 0; i < messages.length; i++) checkMessage(messages[i]!, `messages[${i}]`);
}

function checkMessage(m: RequestMessage, at: string): void {
  for (const [key, role] of OWNER) {
    if (m[key] !== undefined && m.role !== role) {
      throw invalidRequest('unknown_parameter', `${at}.${key} is only accepted on "${role}" messages.`, `${at}.${key}`);
    }
  }
  const callsSomething = (m.tool_calls?.length ?? 0) > 0 || !!m.function_call || !!m.audio;
  // An assistant turn that only calls tools has no content (OpenAI's own answer sets it to null).
  const contentOptional = (m.role === 'assistant' && callsSomething) || m.role === 'function';
  if (m.content === undefined && !contentOptional) throw missingField(`${at}.content`);
  if (m.content === null && !contentOptional) {
    throw invalidRequest('invalid_value', `${at}.content must be a string or a non-empty array of content parts.`, `${at}.content`);
  }
  if (Array.isArray(m.content)) {
    const allowed = PARTS[m.role];
    for (let j = 0; j < m.content.length; j++) {
      const type = m.content[j]!.type;
      if (!allowed.has(type)) {
        throw invalidRequest('invalid_value', `${at}.content[${j}] is a ${type} part, which a "${m.role}" message cannot carry (it takes: ${[...allowed].join(', ')}).`, `${at}.content[${j}]`);
      }
    }
  }
  if (m.role === 'tool' && m.tool_call_id === undefined) throw missingField(`${at}.tool_call_id`);
  if (m.role === 'function' && m.name === undefined) throw missingField(`${at}.name`);
}
