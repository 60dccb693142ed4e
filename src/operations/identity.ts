/**
 * Sign-up, companies and API keys, and the two ways a caller proves who it is:
 * a user's `email:password` (scrypt, slow on purpose) and a company's `company_id:api_key`
 * (SHA-256 digest lookup, fast enough for the ingest path, cached for a few seconds).
 */
import { timingSafeEqual } from 'node:crypto';
import { fail } from '../domain/outcome.js';
import { sha256Hex } from '../lib/canonical.js';
import { newId, newSecret } from '../lib/ids.js';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from '../lib/password.js';
import type { ApiKeyRow, CompanyRow, UserRow } from '../store/types.js';
import { processorKeyContext } from './secrets.js';
import type { Command, Deps } from './deps.js';

export const PASSWORD_LENGTH_MIN = 8;
export const API_KEY_PREFIX = 'sk_';
const API_KEY_SHOWN_CHARS = 7;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function splitName(name: string): { firstName: string; lastName: string } {
  const words = name
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '');
  return { firstName: words[0] ?? '', lastName: words.slice(1).join(' ') };
}

export async function signUp(
  deps: Deps,
  input: { name: string; email: string; password: string },
): Promise<Command<UserRow>> {
  if (input.password.length < PASSWORD_LENGTH_MIN)
    fail('password_too_short', `password must be at least ${PASSWORD_LENGTH_MIN} characters`, 'password');
  const email = normalizeEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  return async (tx) => {
    if (await tx.identity.findUserByEmail(email))
      fail('email_already_registered', 'a user with this email already exists', 'email');
    return tx.identity.insertUser({
      name: input.name.trim(),
      email,
      passwordHash,
      dateOfBirth: null,
      emailVerified: false,
      createdAtMs: deps.clock.now(),
    });
  };
}

/** Checks `email:password`; undefined when wrong. Always pays for one scrypt, so timing tells nothing. */
export async function authenticateUser(deps: Deps, email: string, password: string): Promise<UserRow | undefined> {
  const user = await deps.store.read((tx) => tx.identity.findUserByEmail(normalizeEmail(email)));
  const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
  return ok && user ? user : undefined;
}

export async function updateUser(
  _deps: Deps,
  userId: number,
  changes: { name?: string; email?: string },
): Promise<Command<UserRow>> {
  return async (tx) => {
    const email = changes.email === undefined ? undefined : normalizeEmail(changes.email);
    if (email !== undefined) {
      const other = await tx.identity.findUserByEmail(email);
      if (other && other.id !== userId)
        fail('email_already_registered', 'a user with this email already exists', 'email');
    }
    await tx.identity.updateUser(userId, {
      ...(changes.name !== undefined ? { name: changes.name.trim() } : {}),
      ...(email !== undefined ? { email } : {}),
    });
    const user = await tx.identity.findUserById(userId);
    if (!user) fail('not_found', 'no such user');
    return user;
  };
}

function newApiKey(companyId: string, nowMs: number): { row: ApiKeyRow; secret: string } {
  const secret = newSecret(API_KEY_PREFIX);
  return {
    secret,
    row: {
      keyId: newId('key'),
      companyId,
      digest: sha256Hex(secret),
      prefix: secret.slice(0, API_KEY_SHOWN_CHARS),
      createdAtMs: nowMs,
      revokedAtMs: null,
      lastUsedAtMs: null,
    },
  };
}

export async function createCompany(
  deps: Deps,
  owner: UserRow,
  input: { name: string; processor?: 'sandbox' | 'stripe'; processor_api_key?: string },
): Promise<Command<{ company: CompanyRow; apiKey: string }>> {
  const processor = input.processor ?? 'sandbox';
  if (processor === 'stripe' && !input.processor_api_key)
    fail(
      'processor_api_key_required',
      'processor "stripe" needs processor_api_key (a restricted key with write access to customers, payment intents ' +
        'and payment methods)',
      'processor_api_key',
    );
  if (processor === 'sandbox' && input.processor_api_key !== undefined)
    fail('processor_api_key_not_used', 'the sandbox processor takes no processor_api_key', 'processor_api_key');
  return async (tx) => {
    const now = deps.clock.now();
    const companyId = newId('c');
    const company: CompanyRow = {
      companyId,
      name: input.name.trim(),
      ownerUserId: owner.id,
      processor,
      // Sealed at rest (operations/secrets.ts); opened only to make a processor for a charge.
      processorApiKey:
        input.processor_api_key === undefined
          ? null
          : deps.secrets.seal(input.processor_api_key, processorKeyContext(companyId)),
      createdAtMs: now,
    };
    await tx.identity.insertCompany(company);
    await tx.identity.addCompanyMember(company.companyId, owner.id, 'owner');
    const key = newApiKey(company.companyId, now);
    await tx.identity.insertApiKey(key.row);
    return { company, apiKey: key.secret };
  };
}

export async function createApiKey(
  deps: Deps,
  companyId: string,
): Promise<Command<{ row: ApiKeyRow; secret: string }>> {
  return async (tx) => {
    const key = newApiKey(companyId, deps.clock.now());
    await tx.identity.insertApiKey(key.row);
    return key;
  };
}

export async function listApiKeys(deps: Deps, companyId: string): Promise<ApiKeyRow[]> {
  return deps.store.read((tx) => tx.identity.listApiKeys(companyId));
}

/** Revokes a key; once it has run, this process's key cache must forget the company (`ApiKeyCache.forgetCompany`). */
export async function revokeApiKey(deps: Deps, companyId: string, keyId: string): Promise<Command<void>> {
  return async (tx) => {
    if (!(await tx.identity.revokeApiKey(companyId, keyId, deps.clock.now())))
      fail('not_found', 'no such active API key', 'key_id');
  };
}

/** A member of the company (a company's credentials may act on its members), or undefined. */
export async function memberOfCompany(deps: Deps, companyId: string, userId: number): Promise<UserRow | undefined> {
  return deps.store.read(async (tx) =>
    (await tx.identity.isCompanyMember(companyId, userId)) ? tx.identity.findUserById(userId) : undefined,
  );
}

export async function companyForUser(deps: Deps, companyId: string, userId: number): Promise<CompanyRow | undefined> {
  return deps.store.read(async (tx) =>
    (await tx.identity.isCompanyMember(companyId, userId)) ? tx.identity.findCompany(companyId) : undefined,
  );
}

export async function findCompany(deps: Deps, companyId: string): Promise<CompanyRow | undefined> {
  return deps.store.read((tx) => tx.identity.findCompany(companyId));
}

/** `last_used_at` is written at most this often per key (and per process): most requests only read the clock. */
export const API_KEY_USE_INTERVAL_MS = 60_000;

/** Where a failed `last_used_at` write is reported (Fastify's request logger fits). */
export interface UseLog {
  warn(fields: object, message: string): void;
}

const consoleLog: UseLog = {
  warn: (fields, message) => console.error(`billing engine: ${message}`, fields),
};

interface CachedKey {
  keyId: string;
  companyId: string;
  checkedAtMs: number;
}

/**
 * Verified API keys, by digest, trusted for `ttlMs` (wall clock, not the test clock): a key
 * revoked on another process stops working within that time; on this process at once.
 *
 * A successful check also notes the use (injected clock): the first use of a key, and then one use a
 * minute at most, is written to `last_used_at` in a transaction of its own, in the background; the
 * request neither waits for it nor fails with it (a failed write is logged). So `last_used_at` is
 * right to within a minute; uses in the last minute before a process stops may be lost.
 */
export class ApiKeyCache {
  readonly #byDigest = new Map<string, CachedKey>();
  /** Per key id: the last use this process wrote (or found written), by the injected clock. */
  readonly #usedAtMs = new Map<string, number>();
  readonly #writes = new Set<Promise<void>>();
  static readonly ENTRIES_MAX = 10_000;
  constructor(
    private readonly deps: Deps,
    private readonly ttlMs: number,
  ) {}

  async authenticate(companyId: string, apiKey: string, log: UseLog = consoleLog): Promise<boolean> {
    const digestHex = sha256Hex(apiKey);
    const cached = this.#byDigest.get(digestHex);
    // The cache is keyed by the digest, so a hit is an exact match already (digests compared in variable time say
    // nothing of the key); the digest was checked against the stored one when it was cached, below.
    if (cached && Date.now() - cached.checkedAtMs < this.ttlMs) {
      const ok = cached.companyId === companyId;
      if (ok) this.#noteUse(cached.keyId, log);
      return ok;
    }
    const digest = Buffer.from(digestHex, 'hex');
    const row = await this.deps.store.read((tx) => tx.identity.findApiKeyByDigest(digestHex));
    if (!row || row.revokedAtMs !== null) {
      this.#byDigest.delete(digestHex);
      return false;
    }
    const stored = Buffer.from(row.digest, 'hex');
    if (stored.length !== digest.length || !timingSafeEqual(stored, digest) || row.companyId !== companyId)
      return false;
    if (this.#byDigest.size >= ApiKeyCache.ENTRIES_MAX) {
      this.#byDigest.clear();
      this.#usedAtMs.clear();
    }
    this.#byDigest.set(digestHex, { keyId: row.keyId, companyId, checkedAtMs: Date.now() });
    if (row.lastUsedAtMs !== null && row.lastUsedAtMs > (this.#usedAtMs.get(row.keyId) ?? -1))
      this.#usedAtMs.set(row.keyId, row.lastUsedAtMs);
    this.#noteUse(row.keyId, log);
    return true;
  }

  /** Writes the use when none of this key was written in the last minute; never waits for the write. */
  #noteUse(keyId: string, log: UseLog): void {
    const now = this.deps.clock.now();
    const last = this.#usedAtMs.get(keyId);
    if (last !== undefined && now - last < API_KEY_USE_INTERVAL_MS) return;
    this.#usedAtMs.set(keyId, now);
    const write: Promise<void> = this.deps.store
      .write((tx) => tx.identity.markApiKeyUsed(keyId, now))
      .then(
        () => undefined,
        (err: unknown) => log.warn({ err, keyId }, "recording an API key's last use failed"),
      )
      .finally(() => this.#writes.delete(write));
    this.#writes.add(write);
  }

  /** Resolves when the `last_used_at` writes begun so far have ended (a key list waits for them). */
  async lastUsesWritten(): Promise<void> {
    await Promise.all(this.#writes);
  }

  forgetCompany(companyId: string): void {
    for (const [k, v] of this.#byDigest) if (v.companyId === companyId) this.#byDigest.delete(k);
  }
}
