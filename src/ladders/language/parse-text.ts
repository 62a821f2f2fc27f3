// Reads a ladder config file for the CLI: JSON for `.json` files, YAML (a superset of JSON)
// for everything else. Syntax errors name the file, line and column, editor style.
import { YAMLParseError, parse as parseYaml } from 'yaml';

export function parseConfigText(text: string, fileName: string): unknown {
  if (text.trim() === '') throw new Error(`${fileName}: the file is empty; expected a ladder config`);
  return /\.json$/i.test(fileName) ? parseJson(text, fileName) : parseYamlText(text, fileName);
}

function parseJson(text: string, fileName: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = cleanJsonReason((error as Error).message);
    const { line, column } = lineAndColumn(text, jsonErrorOffset(text));
    throw new Error(`${fileName}:${line}:${column}: invalid JSON: ${reason}`);
  }
}

/**
 * V8 gives a position for some JSON errors but not others ("Unexpected token ..."), so the
 * offset is found as the shortest prefix that fails for a reason other than ending early.
 */
function jsonErrorOffset(text: string): number {
  const failsBeforeEnd = (length: number): boolean => {
    try {
      JSON.parse(text.slice(0, length));
      return false;
    } catch (error) {
      const message = (error as Error).message;
      if (message.includes('end of JSON input')) return false;
      const position = /at position (\d+)/.exec(message)?.[1];
      return position === undefined || Number(position) < length;
    }
  };
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (failsBeforeEnd(middle)) high = middle;
    else low = middle + 1;
  }
  return Math.max(0, low - 1);
}

/** Drops V8's copy of the source and its offset; the line and column replace both. */
function cleanJsonReason(message: string): string {
  const token = /^Unexpected token '([\s\S]*?)', [\s\S]*is not valid JSON$/.exec(message)?.[1];
  if (token !== undefined) return `unexpected character ${JSON.stringify(token)}`;
  const reason = message.replace(/ in JSON at position \d+.*$/s, '');
  return reason.charAt(0).toLowerCase() + reason.slice(1);
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

function parseYamlText(text: string, fileName: string): unknown {
  try {
    return parseYaml(text, { prettyErrors: true, logLevel: 'error', uniqueKeys: true });
  } catch (error) {
    if (!(error instanceof YAMLParseError)) throw error;
    const position = error.linePos?.[0];
    const where = position ? `${fileName}:${position.line}:${position.col}` : fileName;
    const reason = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    throw new Error(`${where}: invalid YAML: ${reason}`);
  }
}
