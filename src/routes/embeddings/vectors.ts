// Vectors in the encoding the caller asked for, whatever the vendor sent: OpenAI's base64 is
// the little-endian float32 bytes of the vector, so floats and base64 convert both ways exactly
// (as far as float32 goes, which is what OpenAI's own floats are).

export function toBase64(vector: number[] | string): string {
  if (typeof vector === 'string') return vector;
  const floats = new Float32Array(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

export function toFloats(vector: number[] | string): number[] {
  if (typeof vector !== 'string') return vector;
  const bytes = Buffer.from(vector, 'base64');
  // Copied into an aligned buffer: a Buffer's offset in its pool need not be a multiple of 4.
  const floats = new Float32Array(new Uint8Array(bytes).buffer, 0, Math.floor(bytes.length / 4));
  return Array.from(floats);
}
