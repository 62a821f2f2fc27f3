// Text from a caller or a vendor (a model name, a connection's label, a failure's reason) put
// into a response header. Node refuses to send a header value holding a control character or
// anything beyond Latin-1, and a header that cannot be sent turns the whole answer into a 500,
// after the vendor was called and billed. So such text goes out percent-encoded.
//
// The rule (docs/providers.md, "Response headers"): every character other than printable ASCII
// (U+0021 to U+007E), and `%` itself, is replaced by the percent-encoding of its UTF-8 bytes,
// as encodeURIComponent would write it; a lone surrogate is encoded as U+FFFD. So
// `decodeURIComponent(value)` gives the text back, and ordinary names (`gpt-4o-mini`) pass
// unchanged. A value longer than MAX_HEADER_TEXT once encoded is left out instead.

/** Longest encoded value sent; longer text is not a name anyone needs in a header. */
export const MAX_HEADER_TEXT = 1024;

const PLAIN = /^[\x21-\x24\x26-\x7e]*$/;
const ENCODED = /[^\x21-\x24\x26-\x7e]/gu;

function percentEncode(char: string): string {
  let out = '';
  for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** `text` as a valid header value by the rule above, or undefined when it is too long to send. */
export function headerText(text: string): string | undefined {
  const value = PLAIN.test(text) ? text : text.replace(ENCODED, percentEncode);
  return value.length <= MAX_HEADER_TEXT ? value : undefined;
}
