/**
 * What a JSON body may be, beyond being JSON. Checked right after the parse (V8's JSON.parse is
 * iterative, so a body of any depth parses without recursion) and before anything that recurses
 * sees the value (schema validation, content hashes, JSON.stringify in the store, the message to
 * SQLite's writer thread): so no body can overflow the stack.
 * - Nested at most BODY_DEPTH_MAX levels (400 `json_nested_too_deeply`).
 * - No string or key holding U+0000: PostgreSQL text cannot hold it, and no field needs it.
 * - No key twice in one object (400 `json_key_appears_twice`, naming it): JSON.parse would keep
 *   the last one silently, and `{"amount":5,"amount":-3}` must not mean −3. jsonc-parser's
 *   scanner counts the keys written, its visitor names the one given twice; the visitor
 *   recurses, which is why the depth is checked first.
 */
import { createScanner, visit, type JSONPath } from 'jsonc-parser';
import { failure, type Failure } from '../domain/outcome.js';

/** Deepest nesting of a request body (metadata has its own, smaller limit). */
export const BODY_DEPTH_MAX = 32;

const NUL_ESCAPE = /\\u0000/i;

/** The first reason `parsed` (the JSON.parse of `text`) is refused; undefined when it is not. */
export function bodyViolation(text: string, parsed: unknown): Failure | undefined {
  const nulPossible = NUL_ESCAPE.test(text);
  const stack: { value: unknown; depth: number }[] = [{ value: parsed, depth: 0 }];
  let keys = 0;
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (nulPossible && value.includes('\u0000')) return nul();
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= BODY_DEPTH_MAX)
      return failure('json_nested_too_deeply', `the JSON body is nested deeper than ${BODY_DEPTH_MAX} levels`);
    if (Array.isArray(value)) {
      for (const v of value) stack.push({ value: v, depth: depth + 1 });
      continue;
    }
    for (const k in value) {
      keys++;
      if (nulPossible && k.includes('\u0000')) return nul();
      stack.push({ value: (value as Record<string, unknown>)[k], depth: depth + 1 });
    }
  }
  // JSON.parse keeps one property per key: the text has more keys than the value exactly when
  // some key is given twice. Counting them (jsonc-parser's scanner) is about as cheap as the
  // parse; only a body that has one is walked again to name it.
  return keys > 0 && keysInText(text) > keys ? duplicateKey(text) : undefined;
}

/** jsonc-parser's `SyntaxKind` values (a const enum, which its typings do not let us import). */
const SyntaxKind = { ColonToken: 6, StringLiteral: 10, EOF: 17 } as const;

/** How many object keys the (valid JSON) text writes: strings followed by a colon. */
function keysInText(text: string): number {
  const scanner = createScanner(text, true);
  let keys = 0;
  let afterString = false;
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    if (token === SyntaxKind.ColonToken && afterString) keys++;
    afterString = token === SyntaxKind.StringLiteral;
  }
  return keys;
}

function nul(): Failure {
  return failure('nul_character_not_allowed', 'strings may not contain the NUL character (\\u0000)');
}

/** The first key written twice in one object, as a failure naming it. */
function duplicateKey(text: string): Failure | undefined {
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
  const where = [...found.path, found.key]
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
    .join('')
    .replace(/^\./, '');
  return failure(
    'json_key_appears_twice',
    `the key "${found.key}" appears twice in the same JSON object (at ${where}); each key may appear once`,
    where,
  );
}
