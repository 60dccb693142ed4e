/** Identity and keys: users, companies and their members, API keys (who may call the API). */

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
}

export interface IdentityReadTx {
  findUserByEmail(email: string): Promise<UserRow | undefined>;
  findUserById(id: number): Promise<UserRow | undefined>;
  findCompany(companyId: string): Promise<CompanyRow | undefined>;
  isCompanyMember(companyId: string, userId: number): Promise<boolean>;
  findApiKeyByDigest(digest: string): Promise<ApiKeyRow | undefined>;
  listApiKeys(companyId: string): Promise<ApiKeyRow[]>;
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
}
