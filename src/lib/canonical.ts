import * as crypto from 'node:crypto';

/** JSON with object keys sorted at every depth: equal values always give equal text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/**
 * Node's one-shot `crypto.hash` (Node 20.12, 21.7 and later): about a quarter of what a Hash object costs for a short
 * input (every API request hashes its key). Earlier Node 20 releases take the Hash object.
 */
const oneShot: typeof crypto.hash | undefined = typeof crypto.hash === 'function' ? crypto.hash : undefined;

export function sha256Hex(text: string | Buffer): string {
  return oneShot !== undefined
    ? oneShot('sha256', text, 'hex')
    : crypto.createHash('sha256').update(text).digest('hex');
}
