/**
 * Secrets at rest: AES-256-GCM (node:crypto) under keys that carry an id, so that they can be
 * rotated. The one place that encrypts and decrypts; it holds no key of its own: the composition
 * root builds a SecretBox from the configured keys (src/secret-keys.ts) and hands it to whoever
 * stores or reads a secret (deps.secrets).
 *
 * A sealed value is one string, `sbx1.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts, a fresh
 * 12-byte IV each time). The key id stored beside the ciphertext says which key opens it. The
 * `context` (what the secret is and whose, e.g. `webhook_secret:wh_…`) is authenticated with it, so
 * a sealed value copied into another row does not open there. A value without the prefix is a
 * plaintext row from before encryption and is returned as is (the start seals those at once).
 *
 * Keys are written `id:base64` (32 bytes), several separated by commas, the first the current one
 * (that seals); the others only open. A key without `id:` gets an id from its digest.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export interface SecretKey {
  id: string;
  key: Buffer;
}

const PREFIX = 'sbx1.';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$|^[A-Za-z0-9_-]+$/;

/** A sealed value that cannot be opened with the keys given: the message says which key it needs. */
export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

const b64u = (b: Buffer): string => b.toString('base64url');

/** An id from the key's digest (stable: the same key always gets the same id). */
export function keyIdOf(key: Buffer): string {
  return `k${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
}

/**
 * Parses `id:base64[,id:base64…]` (or bare base64 keys). Throws an Error in plain words (no key
 * material in it) when an entry is not a 32-byte key or an id repeats.
 */
export function parseSecretKeys(text: string): SecretKey[] {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) throw new Error('holds no key');
  const keys: SecretKey[] = [];
  for (const [i, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? undefined : entry.slice(0, colon);
    const material = colon < 0 ? entry : entry.slice(colon + 1);
    const n = `key ${i + 1}`;
    if (id !== undefined && !KEY_ID.test(id))
      throw new Error(`${n}: the id must be 1–32 letters, digits, "-" or "_" (the form is id:base64)`);
    const key = BASE64.test(material) ? Buffer.from(material, material.includes('-') ? 'base64url' : 'base64') : null;
    if (key === null || key.length !== KEY_BYTES)
      throw new Error(`${n} is not ${KEY_BYTES} bytes in base64 (generate one with \`billing secrets new-key\`)`);
    const keyId = id ?? keyIdOf(key);
    if (keys.some((k) => k.id === keyId)) throw new Error(`the key id ${keyId} appears twice`);
    keys.push({ id: keyId, key });
  }
  return keys;
}

/** A new random key, written as `id:base64`. */
export function newSecretKeyText(): string {
  const key = randomBytes(KEY_BYTES);
  return `${keyIdOf(key)}:${key.toString('base64')}`;
}

export class SecretBox {
  readonly #keys: ReadonlyMap<string, Buffer>;
  readonly #current: SecretKey | undefined;
  readonly #unavailable: string | undefined;

  /**
   * `keys[0]` seals; every key opens what it sealed. Without keys, `unavailable` says why (a
   * process that may not hold secrets, such as a CLI command on PostgreSQL without the key): any use
   * throws it.
   */
  constructor(keys: readonly SecretKey[], unavailable?: string) {
    this.#keys = new Map(keys.map((k) => [k.id, k.key]));
    this.#current = keys[0];
    this.#unavailable = keys.length === 0 ? (unavailable ?? 'no secret key is configured') : undefined;
  }

  /** The id of the key that seals. */
  get currentKeyId(): string {
    return this.#require().id;
  }

  get keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  static isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }

  /** The id of the key a stored value was sealed with (undefined: plaintext). */
  static keyIdOf(stored: string): string | undefined {
    if (!SecretBox.isSealed(stored)) return undefined;
    return stored.slice(PREFIX.length, stored.indexOf('.', PREFIX.length));
  }

  seal(plaintext: string, context: string): string {
    const { id, key } = this.#require();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${PREFIX}${id}.${b64u(iv)}.${b64u(ct)}.${b64u(cipher.getAuthTag())}`;
  }

  /** The plaintext of a stored value; throws SecretBoxError when no key given opens it. */
  open(stored: string, context: string): string {
    if (!SecretBox.isSealed(stored)) return stored;
    const parts = stored.slice(PREFIX.length).split('.');
    if (parts.length !== 4) throw new SecretBoxError(`a sealed secret (${context}) is malformed`);
    const [id, iv, ct, tag] = parts as [string, string, string, string];
    if (this.#unavailable !== undefined) throw new SecretBoxError(this.#unavailable);
    const key = this.#keys.get(id);
    if (key === undefined) {
      throw new SecretBoxError(
        `a secret (${context}) was sealed with key ${id}, which is not among the configured keys ` +
          `(${this.keyIds.join(', ')}): add that key to BILLING_SECRET_KEY (after the current one)`,
      );
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError(
        `a secret (${context}) does not open with the configured key ${id}: that key is not the one it was ` +
          'sealed with (or the value was altered or moved from another row)',
      );
    }
  }

  openOrNull(stored: string | null, context: string): string | null {
    return stored === null ? null : this.open(stored, context);
  }

  /** True when `stored` is sealed with the current key (rotation leaves it alone). */
  isCurrent(stored: string): boolean {
    return SecretBox.keyIdOf(stored) === this.#current?.id;
  }

  #require(): SecretKey {
    if (this.#current === undefined) throw new SecretBoxError(this.#unavailable ?? 'no secret key is configured');
    return this.#current;
  }
}
