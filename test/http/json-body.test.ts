// The checks every JSON body passes after the parse (src/http/json-body.ts), on the function itself:
// the key count that decides whether a body is walked for a duplicate key is an upper bound, so a
// duplicate is never missed, and a string that merely looks like a key never refuses a body.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { BODY_DEPTH_MAX, bodyViolation } from '../../src/http/json-body.js';

const check = (text: string) => bodyViolation(text, JSON.parse(text));

describe('bodyViolation', () => {
  test('a key given twice is named wherever it is, with white space before the colon too', () => {
    const cases: [string, string][] = [
      ['{"a":1,"a":2}', 'a'],
      ['{ "a" : 1 ,\n "a"\t:\r\n2 }', 'a'],
      ['[{"x":{"b":[1,{"c":1,"c":1}]}}]', '[0].x.b[1].c'],
      ['{"s":"\\":","s":1}', 's'],
    ];
    for (const [text, param] of cases) {
      const refused = check(text);
      assert.equal(refused?.reason, 'json_key_appears_twice', text);
      assert.equal(refused?.param, param, text);
    }
  });

  test('strings holding quotes and colons are not keys', () => {
    for (const text of [
      '{"a":"\\":\\":\\":"}',
      '["\\" : x", "\\":"]',
      '{"a":"b\\\\","c":"\\\\\\":"}',
      '{"k\\":":1,"k":2}',
      '"\\":"',
    ]) {
      assert.equal(check(text), undefined, text);
    }
  });

  test('depth is counted to BODY_DEPTH_MAX exactly, and NUL is refused in keys and strings', () => {
    const nest = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
    assert.equal(check(nest(BODY_DEPTH_MAX)), undefined);
    assert.equal(check(nest(BODY_DEPTH_MAX + 1))?.reason, 'json_nested_too_deeply');
    assert.equal(check('{"a":"x\\u0000"}')?.reason, 'nul_character_not_allowed');
    assert.equal(check('{"a\\u0000":1}')?.reason, 'nul_character_not_allowed');
    assert.equal(check('{"a":"\\\\u0000"}'), undefined, 'an escaped backslash before u0000 is no NUL');
  });

  test('a number beyond a double is refused and named by its path; the largest double is not', () => {
    const at = (text: string, arrayParam?: string) => bodyViolation(text, JSON.parse(text), arrayParam);
    assert.deepEqual(
      [at('[{"q":1},{"q":1e400}]', 'events')?.param, at('[{"q":-1e400}]')?.param, at('{"a":{"b":[0,1e999]}}')?.param],
      ['events[1].q', '[0].q', 'a.b[1]'],
    );
    assert.equal(at('1e400')?.reason, 'invalid_request');
    assert.equal(at('1e400')?.param, undefined);
    assert.equal(at('{"a":1.7976931348623157e308,"b":-1e308,"c":5e-324}'), undefined);
  });

  test('property: refused for a repeated key exactly when some object of the text repeats one', () => {
    // Objects written as lists of entries, so that the text can say a key twice.
    type Written = string | number | null | Written[] | { entries: [string, Written][] };
    const key = fc.constantFrom('a', 'b', '"', ':', '\\":', 'a ', ' :');
    const written: fc.Arbitrary<Written> = fc.letrec<{ v: Written }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constantFrom('x', '":', '\\', ' : ', 1, null),
        fc.array(tie('v'), { maxLength: 3 }),
        fc.record({ entries: fc.array(fc.tuple(key, tie('v')), { maxLength: 4 }) }),
      ),
    })).v;
    const text = (w: Written, space: string): string => {
      if (w === null || typeof w !== 'object') return JSON.stringify(w);
      if (Array.isArray(w)) return `[${w.map((x) => text(x, space)).join(',')}]`;
      return `{${w.entries.map(([k, v]) => `${JSON.stringify(k)}${space}:${text(v, space)}`).join(',')}}`;
    };
    const repeats = (w: Written): boolean => {
      if (w === null || typeof w !== 'object') return false;
      if (Array.isArray(w)) return w.some(repeats);
      const keys = w.entries.map(([k]) => k);
      return new Set(keys).size < keys.length || w.entries.some(([, v]) => repeats(v));
    };
    fc.assert(
      fc.property(written, fc.constantFrom('', ' ', '\n\t'), (w, space) => {
        const refused = check(text(w, space));
        assert.equal(refused?.reason === 'json_key_appears_twice', repeats(w));
      }),
      { numRuns: 2_000 },
    );
  });
});
