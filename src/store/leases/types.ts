/**
 * Leases (contract "Leases"): units held on a balance for a short time, drawn by the events that name them.
 * A lease is a hold of the ledger: it is inserted, drawn, closed and expired only by the ledger's postings
 * (src/ledger/port.ts); here are its reads.
 */
import type { LeaseRow, LeaseStatus } from '../../domain/leases.js';
import type { Page, PageResult } from '../common.js';

export type { LeaseRow, LeaseStatus };

/** What a posting changes of a lease: its figures and status after the posting. */
export type LeaseChange = Pick<LeaseRow, 'leaseId' | 'used' | 'released' | 'status' | 'heldFrom' | 'closedAtMs'>;

export interface LeasesReadTx {
  /** The company's lease (another company's: undefined). */
  findLease(companyId: string, leaseId: string): Promise<LeaseRow | undefined>;
  /** The company's lease opened with this client id. */
  findLeaseByClientId(companyId: string, clientId: string): Promise<LeaseRow | undefined>;
  /** Leases by id, of any company (the events that name them are checked against theirs). */
  findLeasesByIds(leaseIds: string[]): Promise<LeaseRow[]>;
  /**
   * An account's leases, newest first; with `status`, those of that status at `nowMs` (an open lease past its
   * expiry is expired); undefined when the cursor names no lease of the list.
   */
  listLeases(
    accountId: string,
    filter: { status?: LeaseStatus; nowMs: number },
    page: Page,
  ): Promise<PageResult<LeaseRow> | undefined>;
}

export type LeasesTx = LeasesReadTx;
