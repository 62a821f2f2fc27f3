// JSON may carry unpaired UTF-16 surrogates, but PostgreSQL cannot store them in jsonb (and
// turns them into U+FFFD in text). Text that reaches us from vendors is made well-formed the
// same way before it is stored, so that one odd character cannot fail a write.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const HAS_LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether `text` is valid Unicode (no unpaired surrogate): String#isWellFormed, before ES2024. */
export function isWellFormedText(text: string): boolean {
  return !HAS_LONE_SURROGATE.test(text);
}

export function wellFormedText(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd');
}

/** A copy of a JSON value with every string, keys included, made well-formed. */
export function wellFormedJson<T>(value: T): T {
  return mapStrings(value, wellFormedText);
}

function mapStrings<T>(value: T, map: (text: string) => string): T {
  if (typeof value === 'string') return map(value) as T;
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, map)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [map(k), mapStrings(v, map)])) as T;
  }
  return value;
}

// PostgreSQL refuses NUL in text and jsonb; replaced like a lone surrogate, it can no longer fail a write.
// eslint-disable-next-line no-control-regex -- NUL is exactly what must be found
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text from outside (vendor answers and messages) made storable: NUL and lone surrogates become U+FFFD. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE, '\ufffd');
}

/** A copy of a JSON value with every string, keys included, made storable. */
export function storableJson<T>(value: T): T {
  return mapStrings(value, storableText);
}
