// The test parser of the Prometheus text format is strict: these are the mistakes it must catch.
import { describe, expect, it } from 'vitest';
import { ExpositionError, parsePrometheusText, valueOf } from '../helpers/prometheus-text.js';

const histogram = (buckets: string) =>
  `# HELP h_seconds A histogram.\n# TYPE h_seconds histogram\n${buckets}h_seconds_sum 1.5\nh_seconds_count 3\n`;

describe('the Prometheus text parser used by the tests', () => {
  it('reads families, help with escapes, labels with escapes, special values and timestamps', () => {
    const text = [
      '# HELP a_total Counts \\\\ things\\nwell.',
      '# TYPE a_total counter',
      'a_total{path="/x",q="say \\"hi\\"\\n",} 3 1700000000000',
      '# a plain comment',
      '# TYPE g gauge',
      'g -Inf',
      'g{k="v"} NaN',
      'g{k="w"} Nan',
      '',
    ].join('\n');
    const f = parsePrometheusText(text);
    expect(f.get('a_total')).toMatchObject({ type: 'counter', help: 'Counts \\ things\nwell.' });
    expect(valueOf(f, 'a_total', { path: '/x', q: 'say "hi"\n' })).toBe(3);
    expect(valueOf(f, 'g')).toBe(-Infinity);
    expect(valueOf(f, 'g', { k: 'v' })).toBeNaN();
    expect(valueOf(f, 'g', { k: 'w' })).toBeNaN();
    const h = parsePrometheusText(histogram('h_seconds_bucket{le="0.1"} 1\nh_seconds_bucket{le="+Inf"} 3\n'));
    expect(h.get('h_seconds')?.samples).toHaveLength(4);
  });

  it.each([
    ['no final line feed', 'g 1'],
    ['a bad metric name', '# TYPE 1g gauge\n1g 1\n'],
    ['an unknown type', '# TYPE g meter\ng 1\n'],
    ['TYPE after samples', 'g 1\n# TYPE g gauge\n'],
    ['two TYPE lines', '# TYPE g gauge\n# TYPE g gauge\ng 1\n'],
    ['a family split in two', '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x="1"} 2\n'],
    ['a duplicate series', '# TYPE g gauge\ng{a="1",b="2"} 1\ng{b="2",a="1"} 1\n'],
    ['an unterminated label value', '# TYPE g gauge\ng{a="1} 1\n'],
    ['a bad escape', '# TYPE g gauge\ng{a="\\t"} 1\n'],
    ['a reserved label name', '# TYPE g gauge\ng{__name__="x"} 1\n'],
    ['a label given twice', '# TYPE g gauge\ng{a="1",a="2"} 1\n'],
    ['a bad value', '# TYPE g gauge\ng 1,5\n'],
    ['a missing value', '# TYPE g gauge\ng{a="1"}\n'],
    ['a negative counter', '# TYPE c_total counter\nc_total -1\n'],
    ['a foreign sample in a histogram', '# TYPE h histogram\nh 1\n'],
    ['a histogram without +Inf', histogram('h_seconds_bucket{le="0.1"} 1\n')],
    ['buckets that are not cumulative', histogram('h_seconds_bucket{le="0.1"} 2\nh_seconds_bucket{le="1"} 1\nh_seconds_bucket{le="+Inf"} 3\n')],
    ['+Inf different from the count', histogram('h_seconds_bucket{le="+Inf"} 2\n')],
    ['buckets out of order', histogram('h_seconds_bucket{le="1"} 1\nh_seconds_bucket{le="0.1"} 1\nh_seconds_bucket{le="+Inf"} 3\n')],
  ])('rejects %s', (_what, text) => {
    expect(() => parsePrometheusText(text)).toThrow(ExpositionError);
  });
});
