/** Identity and keys: users, companies and their members, API keys (who may call the API). */
import type { StoredSecret } from '../common.js';

export interface UserRow {
  id: number;
  name: string;
  email: string;
  passwordHash: string;
  dateOfBirth: string | null;
  emailVerified: boolean;
  createdAtMs: number;
}

export interface CompanyRow {
  companyId: string;
  name: string;
  ownerUserId: number;
  processor: 'sandbox' | 'stripe';
  /** The processor's key as stored: sealed by the operations (operations/secrets.ts), never plaintext. */
  processorApiKey: string | null;
  createdAtMs: number;
}

export interface ApiKeyRow {
  keyId: string;
  companyId: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  digest: string;
  /** First characters of the key, shown in listings to tell keys apart. */
  prefix: string;
  createdAtMs: number;
  revokedAtMs: number | null;
  /** When a request last authenticated with it, to the minute (the cache writes it at most once a minute). */
  lastUsedAtMs: number | null;
}

export interface IdentityReadTx {
  findUserByEmail(email: string): Promise<UserRow | undefined>;
  findUserById(id: number): Promise<UserRow | undefined>;
  findCompany(companyId: string): Promise<CompanyRow | undefined>;
  isCompanyMember(companyId: string, userId: number): Promise<boolean>;
  findApiKeyByDigest(digest: string): Promise<ApiKeyRow | undefined>;
  listApiKeys(companyId: string): Promise<ApiKeyRow[]>;
  /** Companies' stored processor keys (where set), by company id after `afterId`, `limit` at most. */
  listProcessorApiKeys(afterId: string | null, limit: number): Promise<StoredSecret[]>;
  /** The companies the user owns, oldest first. */
  listOwnedCompanies(userId: number): Promise<CompanyRow[]>;
}

export interface IdentityTx extends IdentityReadTx {
  insertUser(row: Omit<UserRow, 'id'>): Promise<UserRow>;
  updateUser(id: number, changes: { name?: string; email?: string }): Promise<void>;
  setEmailVerified(id: number): Promise<void>;
  setPasswordHash(id: number, passwordHash: string): Promise<void>;
  insertCompany(row: CompanyRow): Promise<void>;
  addCompanyMember(companyId: string, userId: number, role: string): Promise<void>;
  insertApiKey(row: ApiKeyRow): Promise<void>;
  /** Returns false when no such active key of the company exists. */
  revokeApiKey(companyId: string, keyId: string, atMs: number): Promise<boolean>;
  /** Moves the key's `last_used_at` forward to `atMs` (never back); false when unknown or already as late. */
  markApiKeyUsed(keyId: string, atMs: number): Promise<boolean>;
  /** Replaces a stored processor key if it is still `from` (another process may have re-sealed it). */
  replaceProcessorApiKey(companyId: string, from: string, to: string): Promise<boolean>;
}
