/**
 * Accounts: a company's end users (name, email, metadata, processor customer, plan). What an
 * account holds is in balances/.
 */
import type { Page, PageResult } from '../common.js';

export interface AccountRow {
  accountId: string;
  companyId: string;
  name: string | null;
  email: string | null;
  metadata: Record<string, unknown> | null;
  processorId: string | null;
  planId: string | null;
  createdAtMs: number;
}

export interface AccountsReadTx {
  findAccount(companyId: string, accountId: string): Promise<AccountRow | undefined>;
  /** The owning company of each existing account among `accountIds` (one query for a whole ingest group). */
  findAccountOwners(accountIds: string[]): Promise<{ accountId: string; companyId: string }[]>;
  /** Paged lists resolve to undefined when `startingAfter` names no row of the list. */
  listAccounts(companyId: string, page: Page): Promise<PageResult<AccountRow> | undefined>;
  /**
   * The accounts of listAccounts() that match `q` (accountSearch() in sql-core.ts says how), in the
   * same order and paging; a cursor is any account of the company.
   */
  searchAccounts(companyId: string, q: string, page: Page): Promise<PageResult<AccountRow> | undefined>;
}

export interface AccountsTx extends AccountsReadTx {
  insertAccount(row: AccountRow): Promise<void>;
  updateAccount(row: AccountRow): Promise<void>;
}
