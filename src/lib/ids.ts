import { createHash, randomBytes } from 'node:crypto';

/**
 * Prefixed identifiers (`a_…`, `ev_…`): 8 base62 characters of the creation millisecond, then
 * 12 random ones (≈ 71 bits). Random rather than counted, so that an id reveals nothing about
 * another company's volume; time first, so that ids created together sort together and an
 * index on them grows at its right edge. With wholly random ids every insert dirtied a random
 * page of each id index, and a 2,000-event group commit wrote megabytes of WAL: the ingest
 * path's largest cost (docs/PERFORMANCE.md). The time here is physical time for index
 * locality, never business time (that comes from the injected clock).
 * Random bytes are drawn from a pooled buffer: one syscall serves thousands of ids, which
 * matters on the ingest path where every event gets an id.
 */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ID_TIME_CHARS = 8;
const ID_RANDOM_CHARS = 12;
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

export type IdPrefix =
  | 'a'
  | 'c'
  | 'ev'
  | 'tx'
  | 'key'
  | 'p'
  | 'wh'
  | 'cl'
  | 'ch'
  | 'rf'
  | 'ob'
  | 'g'
  | 'al'
  | 'ps'
  | 'ls';

/**
 * The id of what a request writes, derived from `seed` (the same seed, the same id): a retry of a
 * request that died mid-way finds what its first attempt wrote instead of writing it again.
 */
export function derivedId(prefix: IdPrefix, seed: string): string {
  const hash = createHash('sha256').update(seed).digest();
  let out = '';
  for (let i = 0; i < ID_TIME_CHARS + ID_RANDOM_CHARS; i++) out += ALPHABET[hash[i]! % 62];
  return `${prefix}_${out}`;
}

let lastMs = -1;
let lastTime = '';

/** `ms` in base62, fixed width: the alphabet is in ASCII order, so text order is time order. */
function timeChars(ms: number): string {
  if (ms === lastMs) return lastTime;
  let out = '';
  let rest = Math.max(0, Math.floor(ms));
  for (let i = 0; i < ID_TIME_CHARS; i++) {
    out = ALPHABET[rest % 62]! + out;
    rest = Math.floor(rest / 62);
  }
  lastMs = ms;
  lastTime = out;
  return out;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${timeChars(Date.now())}${randomChars(ID_RANDOM_CHARS)}`;
}

/** A high-entropy secret (API keys): 32 base62 characters ≈ 190 bits. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomChars(32)}`;
}
