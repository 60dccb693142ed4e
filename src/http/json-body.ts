/**
 * What a JSON body may be, beyond being JSON. Checked right after the parse (V8's JSON.parse is
 * iterative, so a body of any depth parses without recursion) and before anything that recurses
 * sees the value (schema validation, content hashes, JSON.stringify in the store, the message to
 * SQLite's writer thread): so no body can overflow the stack.
 * - Nested at most BODY_DEPTH_MAX levels (400 `json_nested_too_deeply`).
 * - No string or key holding U+0000: PostgreSQL text cannot hold it, and no field needs it.
 * - No key twice in one object (400 `json_key_appears_twice`, naming it): JSON.parse would keep
 *   the last one silently, and `{"amount":5,"amount":-3}` must not mean −3. The keys the text
 *   writes are counted against those the value holds; only a body where they differ is walked
 *   by jsonc-parser's visitor, which names the key given twice. The visitor recurses, which is
 *   why the depth is checked first.
 * - No number beyond the range of a double (400 `invalid_request`, naming the field): JSON.parse
 *   reads `1e400` as Infinity, which no field means, which JSON.stringify would store as null and
 *   which no exact decimal holds. Refused here, for every body and every field (metadata too),
 *   before a schema or a domain rule sees it.
 */
import { visit, type JSONPath } from 'jsonc-parser';
import type { ErrorCode } from './errors.js';

/** Why a body is refused, in the error registry's codes (the parse happens before any route code). */
export interface BodyRefusal {
  reason: ErrorCode;
  message: string;
  param?: string;
}

/** Carries a BodyRefusal from the content-type parser to the error handler. */
export class BodyRefused extends Error {
  readonly refusal: BodyRefusal;
  constructor(refusal: BodyRefusal) {
    super(refusal.message);
    this.refusal = refusal;
  }
}

const refusal = (reason: ErrorCode, message: string, param?: string): BodyRefusal =>
  param === undefined ? { reason, message } : { reason, message, param };

/** Deepest nesting of a request body (metadata has its own, smaller limit). */
export const BODY_DEPTH_MAX = 32;

const NUL_ESCAPE = /\\u0000/i;

/**
 * The first reason `parsed` (the JSON.parse of `text`) is refused; undefined when it is not.
 * `arrayParam` names a bare-array body in `param` (`[0].quantity` → `events[0].quantity`).
 */
export function bodyViolation(text: string, parsed: unknown, arrayParam?: string): BodyRefusal | undefined {
  const walk = { nulPossible: NUL_ESCAPE.test(text), keys: 0 };
  const refused = walkValue(parsed, 0, walk);
  if (refused === NOT_FINITE) return notFinite(nonFinitePath(parsed) ?? [], arrayParam);
  if (refused !== undefined) return refused;
  // JSON.parse keeps one property per key: the text writes more keys than the value holds exactly
  // when some key is given twice. The count is an upper bound (a `\"` inside a string that a colon
  // follows counts too), so a body over it is walked again, exactly, to name the key, or to clear it.
  return walk.keys > 0 && keysInText(text) > walk.keys ? duplicateKey(text) : undefined;
}

/**
 * Depth, NUL characters, numbers beyond a double and the keys the value holds. Recursive, but never
 * deeper than BODY_DEPTH_MAX: a deeper value is refused on the way down.
 */
function walkValue(
  value: unknown,
  depth: number,
  walk: { nulPossible: boolean; keys: number },
): BodyRefusal | typeof NOT_FINITE | undefined {
  if (typeof value !== 'object') {
    if (typeof value === 'string') return walk.nulPossible && value.includes('\u0000') ? nul() : undefined;
    // x − x is 0 for every finite number, NaN for ±Infinity: one subtraction per number on the hot path.
    return typeof value === 'number' && value - value !== 0 ? NOT_FINITE : undefined;
  }
  if (value === null) return undefined;
  if (depth >= BODY_DEPTH_MAX)
    return refusal('json_nested_too_deeply', `the JSON body is nested deeper than ${BODY_DEPTH_MAX} levels`);
  if (Array.isArray(value)) {
    for (const v of value) {
      const refused = walkValue(v, depth + 1, walk);
      if (refused !== undefined) return refused;
    }
    return undefined;
  }
  for (const k in value) {
    walk.keys++;
    if (walk.nulPossible && k.includes('\u0000')) return nul();
    const refused = walkValue((value as Record<string, unknown>)[k], depth + 1, walk);
    if (refused !== undefined) return refused;
  }
  return undefined;
}

/** A number JSON.parse could not hold was found; its path is looked for again then (rarely, so the walk keeps none). */
const NOT_FINITE = Symbol('not finite');

/** The path of the first number of `value` that is not finite; undefined when there is none. */
function nonFinitePath(value: unknown): (string | number)[] | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : [];
  if (value === null || typeof value !== 'object') return undefined;
  for (const [k, v] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const path = nonFinitePath(v);
    if (path) return [k, ...path];
  }
  return undefined;
}

function notFinite(path: (string | number)[], arrayParam: string | undefined): BodyRefusal {
  const where = spellPath(path, typeof path[0] === 'number' ? arrayParam : undefined);
  return refusal(
    'invalid_request',
    `${where || 'body'} must be a finite number; this one is beyond the range of a JSON number this API reads`,
    where || undefined,
  );
}

/** `["events", 0, "quantity"]` → `events[0].quantity`; a bare array's items are named after `arrayParam`. */
function spellPath(path: readonly (string | number)[], arrayParam = ''): string {
  return (
    arrayParam +
    path
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
      .join('')
      .replace(/^\./, '')
  );
}

/**
 * At least the number of object keys the (valid JSON) text writes: every key is a string whose
 * closing quote (after white space) a colon follows, and outside strings no other colon is; inside
 * one, only an escaped quote can precede a colon so. Colons are found with indexOf, which is about
 * three times faster here than a global regular expression.
 */
function keysInText(text: string): number {
  let keys = 0;
  for (let colon = text.indexOf(':'); colon >= 0; colon = text.indexOf(':', colon + 1)) {
    let before = colon - 1;
    let c = text.charCodeAt(before);
    while (c === SPACE || c === TAB || c === LF || c === CR) c = text.charCodeAt(--before);
    if (c === QUOTE) keys++;
  }
  return keys;
}
const [SPACE, TAB, LF, CR, QUOTE] = [0x20, 0x09, 0x0a, 0x0d, 0x22];

function nul(): BodyRefusal {
  return refusal('nul_character_not_allowed', 'strings may not contain the NUL character (\\u0000)');
}

/** The first key written twice in one object, as a failure naming it. */
function duplicateKey(text: string): BodyRefusal | undefined {
  const seen: Set<string>[] = [];
  let found: { key: string; path: JSONPath } | undefined;
  visit(text, {
    onObjectBegin: () => {
      seen.push(new Set());
    },
    onObjectEnd: () => {
      seen.pop();
    },
    onObjectProperty: (key, _offset, _length, _line, _character, pathSupplier) => {
      const keys = seen[seen.length - 1]!;
      if (found === undefined && keys.has(key)) found = { key, path: pathSupplier() };
      keys.add(key);
    },
  });
  if (found === undefined) return undefined;
  const where = spellPath([...found.path, found.key]);
  return refusal(
    'json_key_appears_twice',
    `the key "${found.key}" appears twice in the same JSON object (at ${where}); each key may appear once`,
    where,
  );
}
