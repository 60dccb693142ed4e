/**
 * What `metadata` (the company's own JSON object on accounts and events) may hold. Generous
 * for labels and references, small enough that one request cannot make the store's work heavy:
 * - nested at most METADATA_DEPTH_MAX levels (the metadata object itself is the first);
 * - at most METADATA_ENTRIES_MAX keys in each object and items in each array;
 * - keys of at most METADATA_KEY_LENGTH_MAX characters, strings of at most METADATA_STRING_LENGTH_MAX;
 * - at most METADATA_BYTES_MAX bytes as JSON (UTF-8).
 * The walk is iterative and checks the depth before the size is measured (JSON.stringify
 * recurses), so no metadata can overflow the stack. Beyond a limit: 400 naming the field.
 */
import { failure, type Failure } from './outcome.js';

export const METADATA_DEPTH_MAX = 5;
export const METADATA_ENTRIES_MAX = 50;
export const METADATA_KEY_LENGTH_MAX = 40;
export const METADATA_STRING_LENGTH_MAX = 500;
export const METADATA_BYTES_MAX = 16_384;

/** The limits in words, for the OpenAPI document. */
export const METADATA_LIMITS_TEXT =
  `Any JSON object chosen by the company, within limits: nested at most ${METADATA_DEPTH_MAX} levels ` +
  `(this object is the first), at most ${METADATA_ENTRIES_MAX} keys in each object and items in each array, keys ` +
  `of at most ${METADATA_KEY_LENGTH_MAX} characters, strings of at most ${METADATA_STRING_LENGTH_MAX} characters, ` +
  `at most ${METADATA_BYTES_MAX} bytes as JSON (UTF-8); beyond one: 400 invalid_request naming the field.`;

/** Why `metadata` (at `param`, e.g. `events[2].metadata`) is beyond the limits; undefined when within them. */
export function metadataViolation(metadata: unknown, param: string): Failure | undefined {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: metadata, depth: 1, path: '' }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!;
    const where = path === '' ? param : `${param} (at ${path})`;
    if (typeof value === 'string') {
      if (value.length > METADATA_STRING_LENGTH_MAX)
        return failure(
          'metadata_string_too_long',
          `${where}: a string is ${value.length} characters long; at most ${METADATA_STRING_LENGTH_MAX} are allowed`,
          param,
        );
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth > METADATA_DEPTH_MAX)
      return failure(
        'metadata_nested_too_deeply',
        `${where}: metadata may be nested at most ${METADATA_DEPTH_MAX} levels deep`,
        param,
      );
    const entries: [string, unknown][] = Array.isArray(value)
      ? value.map((v, i) => [`[${i}]`, v])
      : Object.entries(value).map(([k, v]) => [k, v]);
    if (entries.length > METADATA_ENTRIES_MAX)
      return failure(
        'metadata_has_too_many_entries',
        `${where}: ${entries.length} ${Array.isArray(value) ? 'items' : 'keys'}; at most ${METADATA_ENTRIES_MAX} ` +
          'are allowed in each object or array of metadata',
        param,
      );
    for (const [k, v] of entries) {
      if (!Array.isArray(value) && k.length > METADATA_KEY_LENGTH_MAX)
        return failure(
          'metadata_key_too_long',
          `${where}: the key "${k.slice(0, METADATA_KEY_LENGTH_MAX)}…" is ${k.length} characters long; at most ` +
            `${METADATA_KEY_LENGTH_MAX} are allowed`,
          param,
        );
      stack.push({
        value: v,
        depth: depth + 1,
        path: Array.isArray(value) ? `${path}${k}` : path ? `${path}.${k}` : k,
      });
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  if (bytes > METADATA_BYTES_MAX)
    return failure(
      'metadata_too_large',
      `${param} is ${bytes} bytes as JSON; at most ${METADATA_BYTES_MAX} are allowed`,
      param,
    );
  return undefined;
}
