/** Accounts: the row mapper and the SQL both databases share (mixed into SqlTx, sql-base.ts). */
import type { Page } from '../common.js';
import { json, jsonOrNull, num, strOrNull, type SqlRow } from '../sql-core.js';
import { SqlCore } from '../sql-core.js';
import type { AccountRow, AccountsTx } from './types.js';

export const toAccount = (r: SqlRow): AccountRow => ({
  accountId: String(r.account_id),
  companyId: String(r.company_id),
  name: strOrNull(r.name),
  email: strOrNull(r.email),
  metadata: jsonOrNull(r.metadata),
  processorId: strOrNull(r.processor_id),
  planId: strOrNull(r.plan_id),
  createdAtMs: num(r.created_at),
});

export class AccountsSql extends SqlCore implements AccountsTx {
  async findAccount(companyId: string, accountId: string) {
    const r = await this.one('SELECT * FROM accounts WHERE account_id = ? AND company_id = ?', [accountId, companyId]);
    return r && toAccount(r);
  }
  async findAccountOwners(accountIds: string[]) {
    if (accountIds.length === 0) return [];
    const [inIds, params] = this.inList('account_id', accountIds);
    const rows = await this.db.all(`SELECT account_id, company_id FROM accounts WHERE ${inIds}`, params);
    return rows.map((r) => ({ accountId: String(r.account_id), companyId: String(r.company_id) }));
  }
  listAccounts(companyId: string, page: Page) {
    return this.pageBySeq('accounts', 'account_id', [['company_id', companyId]], page, toAccount);
  }
  /**
   * Walks the company's accounts newest first on `accounts_company (company_id, seq)` and keeps
   * those that match, until a page is full: the cost is the number of accounts scanned, which is
   * the page size when matches are common and every account of the company when none matches.
   */
  async searchAccounts(companyId: string, q: string, page: Page) {
    const [company, params] = this.inList('company_id', [companyId]);
    let cursor = '';
    if (page.startingAfter !== undefined) {
      const seq = await this.cursorSeq('accounts', 'account_id', page.startingAfter, company, [...params]);
      if (seq === undefined) return undefined;
      cursor = ' AND seq < ?';
      params.push(seq);
    }
    // Case-insensitive for ASCII letters only, as lower() is on both databases (PostgreSQL's text is COLLATE "C").
    const lower = q.replace(/[A-Z]+/g, (c) => c.toLowerCase());
    const rows = await this.db.all(
      `SELECT * FROM accounts WHERE ${company}${cursor} AND ${this.accountSearch()} ` +
        `ORDER BY ${this.seqOrder('company_id')} LIMIT ?`,
      [...params, lower, lower, [...q].length, q, q, page.limit + 1],
    );
    return { rows: rows.slice(0, page.limit).map(toAccount), hasMore: rows.length > page.limit };
  }

  async insertAccount(a: AccountRow) {
    await this.db.run(
      'INSERT INTO accounts (account_id, company_id, name, email, metadata, processor_id, plan_id, created_at) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [a.accountId, a.companyId, a.name, a.email, json(a.metadata), a.processorId, a.planId, a.createdAtMs],
    );
  }
  async updateAccount(a: AccountRow) {
    await this.db.run(
      'UPDATE accounts SET name = ?, email = ?, metadata = ?, processor_id = ?, plan_id = ? ' +
        'WHERE account_id = ? AND company_id = ?',
      [a.name, a.email, json(a.metadata), a.processorId, a.planId, a.accountId, a.companyId],
    );
  }
}
