import { describe, expect, it } from 'vitest';
import { VerbatimChunk, verbatimChunk } from '../../../src/providers/stream/verbatim-chunk.js';

const HEAD = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini"';
const text = (content: string) => `${HEAD},"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"logprobs":null,"finish_reason":null}],"usage":null}`;

/** What the relay writes for a chunk: ours in front, the vendor's members after model. */
const relayed = (chunk: VerbatimChunk, withUsage: boolean) =>
  JSON.parse(`{"id":"ldr-chat-x","object":"chat.completion.chunk","created":5,"model":"asked"${chunk.rest(withUsage)}`) as Record<string, unknown>;

/** What the full parse gives for the same chunk, with the relay's members set (and usage dropped unless asked). */
const parsed = (data: string, withUsage: boolean) => {
  const chunk = JSON.parse(data) as Record<string, unknown>;
  Object.assign(chunk, { id: 'ldr-chat-x', created: 5, model: 'asked' });
  if (!withUsage) delete chunk.usage;
  return chunk;
};

const valid = (s: string) => {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
};

/** `data` cut at every place, with each character dropped, and with each of `inserted` put at every place. */
function variantsOf(data: string, inserted: string[]): string[] {
  const variants: string[] = [];
  for (let i = 0; i < data.length; i++) {
    variants.push(data.slice(0, i), data.slice(0, i) + data.slice(i + 1));
    for (const c of inserted) variants.push(data.slice(0, i) + c + data.slice(i));
  }
  return variants;
}

describe('verbatimChunk', () => {
  it('keeps a text delta as text: the relay gives the same JSON as a parse would, usage null kept only when asked', () => {
    const data = text('Hello');
    const chunk = verbatimChunk(data)!;
    expect(chunk).toBeInstanceOf(VerbatimChunk);
    expect(chunk.rest(true)).toBe(',"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null}');
    expect(chunk.rest(false)).toBe(',"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]}');
    for (const withUsage of [true, false]) expect(relayed(chunk, withUsage)).toEqual(parsed(data, withUsage));
    expect(chunk.usage).toBe(null);
    expect(chunk.chars).toBe(5);
  });

  it('parses only when a reader looks at the choices', () => {
    const chunk = verbatimChunk(text('Hi'))!;
    expect(chunk.choices).toEqual([{ index: 0, delta: { content: 'Hi' }, logprobs: null, finish_reason: null }]);
  });

  it('counts content and refusal as their decoded length, escapes included', () => {
    for (const content of ['', 'a "quoted" \\ word\n', 'é🌍\u0001', '\u2028</script>']) expect(verbatimChunk(text(content))!.chars).toBe(content.length);
    const refusal = verbatimChunk(`${HEAD},"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":"No \\u00e9"},"finish_reason":null}]}`)!;
    expect(refusal.chars).toBe(4);
    expect(refusal.usage).toBe(undefined);
  });

  it('takes the first chunk, other members of any JSON type, and several choices', () => {
    const samples = [
      `${HEAD},"service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x1"}`,
      `${HEAD},"choices":[{"index":0,"delta":{"content":"a"},"logprobs":{"content":[{"token":"a","logprob":-0.5e-3,"bytes":[97],"top_logprobs":[]}]},"finish_reason":null},{"index":1,"delta":{"content":"b"},"finish_reason":null}],"x":[true,false,{},[]]}`,
    ];
    for (const data of samples) {
      const chunk = verbatimChunk(data)!;
      expect(chunk).not.toBe(null);
      expect(relayed(chunk, true)).toEqual(parsed(data, true));
    }
  });

  it('leaves to the full parse what it must read or normalise, and any other shape', () => {
    const refused = [
      `${HEAD},"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`,
      `${HEAD},"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`,
      `${HEAD},"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"usage":{"prompt_tokens":1}}`,
      `${HEAD},"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":null}]}`,
      `${HEAD},"error":{"message":"boom"},"choices":[{"index":0,"delta":{},"finish_reason":null}]}`,
      `${HEAD},"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"model":"other"}`,
      `${HEAD},"usage":null}`,
      `${HEAD},"choices":[{"index":0,"finish_reason":null}]}`,
      `{"object":"chat.completion.chunk","id":"x","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":null}]}`,
      `{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []}`,
      `${HEAD},"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}], "x":1}`,
      `${HEAD},"x":${'['.repeat(40)}${']'.repeat(40)},"choices":[{"index":0,"delta":{},"finish_reason":null}]}`,
    ];
    for (const data of refused) expect(verbatimChunk(data), data).toBe(null);
  });

  it('never takes text that is not valid JSON: every cut and every inserted character of a chunk', () => {
    const data = `${HEAD},"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"a\\u00e9\\"b","role":"assistant"},"logprobs":{"n":-1.5E+2,"z":0},"finish_reason":null}],"usage":null,"t":true}`;
    expect(verbatimChunk(data)).not.toBe(null);
    const variants = variantsOf(data, ['"', '\\', ',', '}', ']', '{', '[', ':', '0', '-', '.', 'e', '\n', 'x']);
    for (const variant of variants) if (verbatimChunk(variant) !== null) expect(valid(variant), variant).toBe(true);
  });
});

describe('VerbatimChunk.follows: the next chunk of the same shape, only its text string scanned', () => {
  it('takes a chunk that differs only in its text, with the same relay text, usage and count as a full scan', () => {
    const first = verbatimChunk(text('Hello'))!;
    for (const content of ['', ' world', 'a "quoted" \\ word\n', 'é🌍\u0001', 'x'.repeat(300)]) {
      const data = text(content);
      const followed = first.follows(data)!;
      expect(followed, content).toBeInstanceOf(VerbatimChunk);
      const scanned = verbatimChunk(data)!;
      for (const withUsage of [true, false]) {
        expect(followed.rest(withUsage)).toBe(scanned.rest(withUsage));
        expect(relayed(followed, withUsage)).toEqual(parsed(data, withUsage));
      }
      expect(followed.usage).toBe(null);
      expect(followed.chars).toBe(content.length);
      // And a chunk taken that way is itself followed by the next.
      expect(followed.follows(text('next'))!.rest(false)).toBe(verbatimChunk(text('next'))!.rest(false));
    }
  });

  it('leaves every other chunk to the full scan: other members, two texts, the last chunks', () => {
    const first = verbatimChunk(text('Hello'))!;
    const others = [
      text('Hi').replace('"chatcmpl-1"', '"chatcmpl-2"'),
      text('Hi').replace('fp_1', 'fp_2'),
      `${HEAD},"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
      `${HEAD},"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":1}}`,
      `${HEAD},"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}`,
    ];
    for (const data of others) expect(first.follows(data), data).toBe(null);
    // A chunk with two text strings (two choices) frames nothing.
    const two = verbatimChunk(`${HEAD},"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null},{"index":1,"delta":{"content":"b"},"finish_reason":null}]}`)!;
    expect(two.follows(`${HEAD},"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null},{"index":1,"delta":{"content":"c"},"finish_reason":null}]}`)).toBe(null);
    // The full scan still takes what follows() refuses, through verbatimChunk(data, last).
    expect(verbatimChunk(others[0]!, first)).toBeInstanceOf(VerbatimChunk);
    expect(verbatimChunk(others[2]!, first)).toBe(null);
  });

  it('never takes text that is not valid JSON: every cut and every inserted character of the string and around it', () => {
    const first = verbatimChunk(text('Hello'))!;
    let taken = 0;
    for (const variant of variantsOf(text('a\u00e9"b\\'), ['"', '\\', 'u', '\n', '}', 'x'])) {
      const followed = first.follows(variant);
      if (followed === null) continue;
      taken++;
      expect(valid(variant), variant).toBe(true);
      expect(followed.chars).toBe((JSON.parse(variant) as { choices: [{ delta: { content: string } }] }).choices[0].delta.content.length);
    }
    expect(taken).toBeGreaterThan(10);
  });
});
