// A strict parser of the Prometheus text exposition format 0.0.4, for tests: anything a
// Prometheus server would refuse, or that breaks the format's rules (a sample before its
// TYPE, a family split in two, a duplicate series, histogram buckets that are out of order,
// not cumulative, or lack +Inf), throws with the line number.

export type FamilyType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: FamilyType;
  help: string | null;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<FamilyType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Partial<Record<FamilyType, string[]>> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'] };

export class ExpositionError extends Error {}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  const seen = new Set<string>();
  let current: Family | null = null;
  if (text.length > 0 && !text.endsWith('\n')) throw new ExpositionError('the exposition must end with a line feed');
  const lines = text.split('\n').slice(0, -1);

  const familyOf = (name: string, n: number): Family => {
    let family = families.get(name);
    if (!family) {
      family = { name, type: 'untyped', help: null, samples: [] };
      families.set(name, family);
    }
    if (current !== family) {
      if (closed.has(name)) throw new ExpositionError(`line ${n}: ${name} appears again after another family`);
      if (current) closed.add(current.name);
      current = family;
    }
    return family;
  };

  lines.forEach((line, i) => {
    const n = i + 1;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!meta) return; // a plain comment
      const [, kind, name, rest = ''] = meta as unknown as [string, string, string, string?];
      if (!METRIC_NAME.test(name)) throw new ExpositionError(`line ${n}: bad metric name ${JSON.stringify(name)}`);
      const family = familyOf(name, n);
      if (kind === 'HELP') {
        if (family.help !== null) throw new ExpositionError(`line ${n}: a second HELP for ${name}`);
        family.help = unescape(rest, false, n);
      } else {
        if (!TYPES.has(rest as FamilyType)) throw new ExpositionError(`line ${n}: unknown type ${JSON.stringify(rest)}`);
        if (family.samples.length > 0) throw new ExpositionError(`line ${n}: TYPE of ${name} after its samples`);
        if (family.type !== 'untyped' || seen.has(`type:${name}`)) throw new ExpositionError(`line ${n}: a second TYPE for ${name}`);
        seen.add(`type:${name}`);
        family.type = rest as FamilyType;
      }
      return;
    }
    const sample = parseSample(line, n);
    const owner = ownerOf(sample.name, families, current);
    const family = familyOf(owner, n);
    const series = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(series)) throw new ExpositionError(`line ${n}: duplicate series ${series}`);
    seen.add(series);
    family.samples.push(sample);
  });

  for (const family of families.values()) check(family);
  return families;
}

/** A histogram's `x_bucket` belongs to family `x` when that family is declared as one. */
function ownerOf(sampleName: string, families: Map<string, Family>, current: Family | null): string {
  if (current && sampleName !== current.name) {
    const suffix = SUFFIXES[current.type]?.find((s) => sampleName === current.name + s);
    if (suffix) return current.name;
  }
  for (const [name, family] of families) {
    if (SUFFIXES[family.type]?.some((s) => sampleName === name + s)) return name;
  }
  return sampleName;
}

function parseSample(line: string, n: number): Sample {
  const head = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
  if (!head) throw new ExpositionError(`line ${n}: no metric name in ${JSON.stringify(line)}`);
  const name = head[1]!;
  let pos = name.length;
  const labels: Record<string, string> = {};
  if (line[pos] === '{') {
    pos++;
    while (line[pos] !== '}') {
      const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(pos));
      if (!label || !LABEL_NAME.test(label[1]!) || label[1]!.startsWith('__')) throw new ExpositionError(`line ${n}: bad label at column ${pos + 1}`);
      pos += label[0].length;
      let raw = '';
      for (;;) {
        const ch = line[pos];
        if (ch === undefined) throw new ExpositionError(`line ${n}: unterminated label value`);
        if (ch === '"') break;
        if (ch === '\\') {
          raw += ch + (line[pos + 1] ?? '');
          pos += 2;
        } else {
          raw += ch;
          pos++;
        }
      }
      pos++;
      if (label[1]! in labels) throw new ExpositionError(`line ${n}: label ${label[1]} given twice`);
      labels[label[1]!] = unescape(raw, true, n);
      if (line[pos] === ',') pos++;
      else if (line[pos] !== '}') throw new ExpositionError(`line ${n}: expected , or } at column ${pos + 1}`);
    }
    pos++;
  }
  const rest = line.slice(pos);
  const parts = /^ +(\S+)(?: +(-?\d+))?$/.exec(rest);
  if (!parts) throw new ExpositionError(`line ${n}: bad value part ${JSON.stringify(rest)}`);
  return { name, labels, value: parseValue(parts[1]!, n) };
}

function parseValue(text: string, n: number): number {
  // As Prometheus reads them (Go's ParseFloat): any case, so prom-client's `Nan` is accepted.
  if (/^\+?inf(inity)?$/i.test(text)) return Infinity;
  if (/^-inf(inity)?$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new ExpositionError(`line ${n}: bad value ${JSON.stringify(text)}`);
  return Number(text);
}

function unescape(raw: string, quotes: boolean, n: number): string {
  return raw.replace(/\\(.?)/g, (_all, ch: string) => {
    if (ch === '\\') return '\\';
    if (ch === 'n') return '\n';
    if (ch === '"' && quotes) return '"';
    throw new ExpositionError(`line ${n}: bad escape \\${ch}`);
  });
}

function check(family: Family): void {
  const { name, type, samples } = family;
  for (const s of samples) {
    const allowed = type === 'histogram' || type === 'summary' ? SUFFIXES[type]!.map((x) => name + x).concat(type === 'summary' ? [name] : []) : [name];
    if (!allowed.includes(s.name)) throw new ExpositionError(`${s.name} is not a sample name of ${type} ${name}`);
    if (type === 'counter' && !(s.value >= 0)) throw new ExpositionError(`counter ${name} has the value ${s.value}`);
    if (type === 'histogram' && s.name === `${name}_bucket` && !('le' in s.labels)) throw new ExpositionError(`${name}_bucket without le`);
    if (type !== 'histogram' && 'le' in s.labels) throw new ExpositionError(`${name} uses the reserved label le`);
  }
  if (type === 'histogram') checkHistogram(family);
}

function checkHistogram({ name, samples }: Family): void {
  const key = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).filter(([k]) => k !== 'le').sort());
  const series = new Map<string, { buckets: Array<[number, number]>; count?: number; sum?: number }>();
  for (const s of samples) {
    const k = key(s.labels);
    const entry = series.get(k) ?? { buckets: [] };
    series.set(k, entry);
    if (s.name === `${name}_bucket`) entry.buckets.push([parseValue(s.labels.le!, 0), s.value]);
    else if (s.name === `${name}_count`) entry.count = s.value;
    else entry.sum = s.value;
  }
  for (const [k, { buckets, count, sum }] of series) {
    const where = `${name}${k}`;
    if (count === undefined || sum === undefined) throw new ExpositionError(`${where}: _count or _sum missing`);
    const last = buckets.at(-1);
    if (!last || last[0] !== Infinity) throw new ExpositionError(`${where}: no +Inf bucket last`);
    if (last[1] !== count) throw new ExpositionError(`${where}: +Inf bucket ${last[1]} differs from _count ${count}`);
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]![0] > buckets[i - 1]![0])) throw new ExpositionError(`${where}: buckets out of order`);
      if (buckets[i]![1] < buckets[i - 1]![1]) throw new ExpositionError(`${where}: buckets not cumulative`);
    }
  }
}

/** The value of one series (exact labels), or undefined. */
export function valueOf(families: Map<string, Family>, sampleName: string, labels: Record<string, string> = {}): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name === sampleName && JSON.stringify(Object.entries(s.labels).sort()) === want) return s.value;
    }
  }
  return undefined;
}
