/** Leases: the row mapper and the reads both databases share (leases/types.ts); the writes are the ledger's. */
import type { Page } from '../common.js';
import { decodeAllocations } from '../grants/sql.js';
import { num, numOrNull, strOrNull, type SqlRow, SqlCore } from '../sql-core.js';
import type { LeaseRow, LeasesTx, LeaseStatus } from './types.js';

export const toLease = (r: SqlRow): LeaseRow => ({
  leaseId: String(r.lease_id),
  companyId: String(r.company_id),
  accountId: String(r.account_id),
  denomination: String(r.denomination),
  clientId: strOrNull(r.client_id),
  amount: num(r.amount),
  used: num(r.used),
  released: num(r.released),
  status: String(r.status) as LeaseStatus,
  heldFrom: decodeAllocations(r.held_from) ?? [],
  expiresAtMs: num(r.expires_at),
  createdAtMs: num(r.created_at),
  closedAtMs: numOrNull(r.closed_at),
});

export class LeasesSql extends SqlCore implements LeasesTx {
  async findLease(companyId: string, leaseId: string) {
    const r = await this.one('SELECT * FROM leases WHERE lease_id = ? AND company_id = ?', [leaseId, companyId]);
    return r && toLease(r);
  }
  async findLeaseByClientId(companyId: string, clientId: string) {
    const r = await this.one('SELECT * FROM leases WHERE company_id = ? AND client_id = ?', [companyId, clientId]);
    return r && toLease(r);
  }
  async findLeasesByIds(leaseIds: string[]) {
    if (leaseIds.length === 0) return [];
    const [inIds, params] = this.inList('lease_id', leaseIds);
    return (await this.db.all(`SELECT * FROM leases WHERE ${inIds}`, params)).map(toLease);
  }
  listLeases(accountId: string, filter: { status?: LeaseStatus; nowMs: number }, page: Page) {
    const extra =
      filter.status === undefined
        ? ''
        : filter.status === 'open'
          ? ` AND status = 'open' AND expires_at > ${Math.trunc(filter.nowMs)}`
          : filter.status === 'expired'
            ? ` AND (status = 'expired' OR (status = 'open' AND expires_at <= ${Math.trunc(filter.nowMs)}))`
            : " AND status = 'closed'";
    return this.pageBySeq('leases', 'lease_id', [['account_id', accountId]], page, toLease, extra);
  }
}
