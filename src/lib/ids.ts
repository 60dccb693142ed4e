import { randomBytes } from 'node:crypto';

/**
 * Prefixed random identifiers (`a_…`, `ev_…`). Random rather than sequential so that an id
 * reveals nothing about another company's volume; 16 base62 characters ≈ 95 bits.
 * Random bytes are drawn from a pooled buffer: one syscall serves thousands of ids, which
 * matters on the ingest path where every event gets an id.
 */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ID_RANDOM_CHARS = 16;
const POOL_BYTES = 16 * 1024;

let pool = randomBytes(POOL_BYTES);
let offset = 0;

function randomChars(count: number): string {
  let out = '';
  while (out.length < count) {
    if (offset >= pool.length) {
      pool = randomBytes(POOL_BYTES);
      offset = 0;
    }
    const byte = pool[offset++]!;
    // 248 = 62 * 4: rejecting bytes at or above it keeps every character equally likely.
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

export type IdPrefix = 'a' | 'c' | 'ev' | 'tx' | 'key' | 'p' | 'wh' | 'cl' | 'ch' | 'rf' | 'ob';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomChars(ID_RANDOM_CHARS)}`;
}

/** A high-entropy secret (API keys): 32 base62 characters ≈ 190 bits. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomChars(32)}`;
}
