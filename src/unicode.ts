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

/** A JSON value with every string, keys included, made well-formed: a copy where one changes, else the value itself. */
export function wellFormedJson<T>(value: T): T {
  return mapStrings(value, wellFormedText);
}

// Copies only the arrays and objects that hold a changed string: most values (a finished run's
// trace, a stored response) have none, and copying them whole cost microseconds per write.
function mapStrings<T>(value: T, map: (text: string) => string): T {
  if (typeof value === 'string') return map(value) as T;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const mapped = mapStrings(value[i] as unknown, map);
      if (mapped !== value[i]) (out ??= value.slice())[i] = mapped;
    }
    return (out ?? value) as T;
  }
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    for (const key of Object.keys(object)) {
      if (map(key) !== key || mapStrings(object[key], map) !== object[key]) {
        // fromEntries defines every key as its own (a `__proto__` key from JSON.parse stays data).
        return Object.fromEntries(Object.entries(object).map(([k, v]) => [map(k), mapStrings(v, map)])) as T;
      }
    }
    return value;
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

/** A JSON value with every string, keys included, made storable: a copy where one changes, else the value itself. */
export function storableJson<T>(value: T): T {
  return mapStrings(value, storableText);
}
