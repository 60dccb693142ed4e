/** Identity and keys: row mappers and the SQL both databases share (mixed into SqlTx, sql-base.ts). */
import { SqlCore, num, numOrNull, strOrNull, type SqlRow } from '../sql-core.js';
import type { ApiKeyRow, CompanyRow, IdentityTx, UserRow } from './types.js';

export const toUser = (r: SqlRow): UserRow => ({
  id: num(r.id),
  name: String(r.name),
  email: String(r.email),
  passwordHash: String(r.password_hash),
  dateOfBirth: strOrNull(r.date_of_birth),
  emailVerified: Boolean(r.email_verified),
  createdAtMs: num(r.created_at),
});
export const toCompany = (r: SqlRow): CompanyRow => ({
  companyId: String(r.company_id),
  name: String(r.name),
  ownerUserId: num(r.owner_user_id),
  processor: r.processor === 'stripe' ? 'stripe' : 'sandbox',
  processorApiKey: strOrNull(r.processor_api_key),
  createdAtMs: num(r.created_at),
});
export const toApiKey = (r: SqlRow): ApiKeyRow => ({
  keyId: String(r.key_id),
  companyId: String(r.company_id),
  digest: String(r.digest),
  prefix: String(r.prefix),
  createdAtMs: num(r.created_at),
  revokedAtMs: numOrNull(r.revoked_at),
  lastUsedAtMs: numOrNull(r.last_used_at),
});

export class IdentitySql extends SqlCore implements IdentityTx {
  async findUserByEmail(email: string) {
    const r = await this.one('SELECT * FROM users WHERE email = ?', [email]);
    return r && toUser(r);
  }
  async findUserById(id: number) {
    const r = await this.one('SELECT * FROM users WHERE id = ?', [id]);
    return r && toUser(r);
  }
  async findCompany(companyId: string) {
    const r = await this.one('SELECT * FROM companies WHERE company_id = ?', [companyId]);
    return r && toCompany(r);
  }
  async isCompanyMember(companyId: string, userId: number) {
    return (
      (await this.one('SELECT 1 AS x FROM company_members WHERE company_id = ? AND user_id = ?', [
        companyId,
        userId,
      ])) !== undefined
    );
  }
  async findApiKeyByDigest(digest: string) {
    const r = await this.one('SELECT * FROM api_keys WHERE digest = ?', [digest]);
    return r && toApiKey(r);
  }
  async listApiKeys(companyId: string) {
    return (
      await this.db.all('SELECT * FROM api_keys WHERE company_id = ? ORDER BY created_at, key_id', [companyId])
    ).map(toApiKey);
  }

  async listOwnedCompanies(userId: number) {
    return (
      await this.db.all(
        'SELECT c.* FROM companies c JOIN company_members m ON m.company_id = c.company_id ' +
          "WHERE m.user_id = ? AND m.role = 'owner' ORDER BY c.created_at, c.company_id",
        [userId],
      )
    ).map(toCompany);
  }

  async insertUser(row: Omit<UserRow, 'id'>) {
    const r = await this.one(
      'INSERT INTO users (name, email, password_hash, date_of_birth, email_verified, created_at) ' +
        'VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
      [row.name, row.email, row.passwordHash, row.dateOfBirth, this.bool(row.emailVerified), row.createdAtMs],
    );
    return toUser(r!);
  }
  async updateUser(id: number, changes: { name?: string; email?: string }) {
    if (changes.name !== undefined) await this.db.run('UPDATE users SET name = ? WHERE id = ?', [changes.name, id]);
    if (changes.email !== undefined) await this.db.run('UPDATE users SET email = ? WHERE id = ?', [changes.email, id]);
  }
  async setEmailVerified(id: number) {
    await this.db.run('UPDATE users SET email_verified = ? WHERE id = ?', [this.bool(true), id]);
  }
  async setPasswordHash(id: number, passwordHash: string) {
    await this.db.run('UPDATE users SET password_hash = ? WHERE id = ?', [passwordHash, id]);
  }
  async insertCompany(row: CompanyRow) {
    await this.db.run(
      'INSERT INTO companies (company_id, name, owner_user_id, processor, processor_api_key, created_at) ' +
        'VALUES (?, ?, ?, ?, ?, ?)',
      [row.companyId, row.name, row.ownerUserId, row.processor, row.processorApiKey, row.createdAtMs],
    );
  }
  async addCompanyMember(companyId: string, userId: number, role: string) {
    await this.db.run('INSERT INTO company_members (company_id, user_id, role) VALUES (?, ?, ?)', [
      companyId,
      userId,
      role,
    ]);
  }
  async insertApiKey(row: ApiKeyRow) {
    await this.db.run(
      'INSERT INTO api_keys (key_id, company_id, digest, prefix, created_at, revoked_at, last_used_at) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?)',
      [row.keyId, row.companyId, row.digest, row.prefix, row.createdAtMs, row.revokedAtMs, row.lastUsedAtMs],
    );
  }
  async listProcessorApiKeys(afterId: string | null, limit: number) {
    const rows = await this.db.all(
      'SELECT company_id, processor_api_key FROM companies ' +
        'WHERE processor_api_key IS NOT NULL AND company_id > ? ORDER BY company_id LIMIT ?',
      [afterId ?? '', limit],
    );
    return rows.map((r) => ({ id: String(r.company_id), value: String(r.processor_api_key) }));
  }
  async replaceProcessorApiKey(companyId: string, from: string, to: string) {
    return (
      (await this.db.run('UPDATE companies SET processor_api_key = ? WHERE company_id = ? AND processor_api_key = ?', [
        to,
        companyId,
        from,
      ])) > 0
    );
  }
  async revokeApiKey(companyId: string, keyId: string, atMs: number) {
    return (
      (await this.db.run(
        'UPDATE api_keys SET revoked_at = ? WHERE company_id = ? AND key_id = ? AND revoked_at IS NULL',
        [atMs, companyId, keyId],
      )) > 0
    );
  }
  async markApiKeyUsed(keyId: string, atMs: number) {
    return (
      (await this.db.run(
        'UPDATE api_keys SET last_used_at = ? WHERE key_id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
        [atMs, keyId, atMs],
      )) > 0
    );
  }
}
