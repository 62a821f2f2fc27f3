// PRICES_FILE: operator prices that add to or override the built-in table without a release.
// The file is JSON, `{"model-name": {"input": usd_per_million, "output": usd_per_million}}`
// (optionally also "cached_input" and "reasoning": the rates of cache reads and reasoning tokens),
// read once at boot; every problem is reported at once, each naming the model and member.
import { readFileSync } from 'node:fs';
import { isWholeNanos } from '../money.js';
import type { ModelPrice } from './prices.js';

export class PricesFileError extends Error {
  override readonly name = 'PricesFileError';
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const MEMBERS = ['input', 'output', 'cached_input', 'reasoning'];

/** Validates a parsed prices document; returns the prices keyed by lower-case model name. */
export function parsePrices(document: unknown): Record<string, ModelPrice> {
  if (!isPlainObject(document)) {
    throw new PricesFileError('must be a JSON object mapping model names to {"input": number, "output": number}');
  }
  const problems: string[] = [];
  const prices: Record<string, ModelPrice> = {};
  for (const [name, entry] of Object.entries(document)) {
    const where = JSON.stringify(name);
    if (name.trim() === '' || name.trim() !== name) {
      problems.push(`${where}: a model name must be non-empty, without leading or trailing spaces`);
      continue;
    }
    if (!isPlainObject(entry)) {
      problems.push(`${where}: must be an object {"input": number, "output": number}, got ${JSON.stringify(entry)}`);
      continue;
    }
    for (const member of Object.keys(entry)) {
      if (!MEMBERS.includes(member)) problems.push(`${where}.${member}: unknown member (only "input", "output", "cached_input" and "reasoning" are allowed)`);
    }
    for (const member of MEMBERS) {
      const value = entry[member];
      if (value === undefined) {
        if (member === 'input' || member === 'output') problems.push(`${where}.${member}: missing (USD per million tokens)`);
      } else if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        problems.push(`${where}.${member}: must be a number of USD per million tokens, 0 or more, got ${JSON.stringify(value)}`);
      } else if (!isWholeNanos(value)) {
        problems.push(`${where}.${member}: at most 9 decimals (whole nano-dollars per million tokens), got ${JSON.stringify(value)}`);
      }
    }
    const key = name.toLowerCase();
    if (prices[key]) problems.push(`${where}: listed twice (model names are compared case-insensitively)`);
    prices[key] = { input: entry.input as number, output: entry.output as number };
    if (entry.cached_input !== undefined) prices[key].cachedInput = entry.cached_input as number;
    if (entry.reasoning !== undefined) prices[key].reasoning = entry.reasoning as number;
  }
  if (problems.length > 0) throw new PricesFileError(problems.join('; '));
  return prices;
}

/** Reads and validates the file; throws PricesFileError saying what is wrong. */
export function loadPricesFile(file: string): Record<string, ModelPrice> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new PricesFileError(`cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new PricesFileError(`is not valid JSON: ${(error as Error).message}`);
  }
  return parsePrices(document);
}
