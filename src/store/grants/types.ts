/**
 * Credit grants: the lots a balance's units belong to (contract "Credit grants"). A grant's row
 * holds what rarely changes; while the grant is live its remainder and holds are the balance's
 * (`BalanceRow.grants`, written with the balance), and its row's `remaining` and `held` are the
 * figures of its last write: the final ones once the grant is finished. Reads overlay the live
 * figures (ledger/grants.ts). domain/grants.ts has the rules, domain/grant-lots.ts the lot's shape
 * (`Grant`, kept in the balance row while live).
 */
import type { Allocation, Grant, GrantCategory, GrantSource, GrantStatus } from '../../domain/grant-lots.js';
import type { Page, PageResult } from '../common.js';

export type { Allocation, Grant, GrantCategory, GrantSource, GrantStatus };

export interface GrantRow {
  grantId: string;
  companyId: string;
  accountId: string;
  denomination: string;
  amount: number;
  remaining: number;
  held: number;
  priority: number;
  category: GrantCategory;
  /** USD cents per unit, a decimal string; paid grants only. */
  costBasis: string | null;
  name: string | null;
  metadata: Record<string, unknown> | null;
  source: GrantSource;
  effectiveAtMs: number;
  expiresAtMs: number | null;
  createdAtMs: number;
  voidedAtMs: number | null;
}

/** A grant row's figures after a posting changed them (finished, PATCHed, voided): all from its lot. */
export interface GrantUpdate {
  grantId: string;
  remaining: number;
  held: number;
  priority: number;
  expiresAtMs: number | null;
  voidedAtMs: number | null;
}

export interface GrantFilter {
  accountId?: string;
  denomination?: string;
  category?: GrantCategory;
  statuses: readonly GrantStatus[];
  /** `expires_at` before this instant (never-expiring grants excluded). */
  expiresBeforeMs?: number;
  /** The instant the statuses are read at. */
  nowMs: number;
}

export interface GrantsReadTx {
  findGrant(companyId: string, grantId: string): Promise<GrantRow | undefined>;
  /** A balance's grants of these statuses, in drawing order (a balance has few live ones). */
  listGrantsOfBalance(
    accountId: string,
    denomination: string,
    statuses: readonly GrantStatus[],
    nowMs: number,
  ): Promise<GrantRow[]>;
  /** The company's grants by `expires_at` (never-expiring last), then `grant_id`; undefined: unknown cursor. */
  listGrants(companyId: string, filter: GrantFilter, page: Page): Promise<PageResult<GrantRow> | undefined>;
}

/** Grants are created and their figures changed only by the ledger's postings (src/ledger/port.ts). */
export interface GrantsTx extends GrantsReadTx {
  /** Sets a grant's `name` and `metadata` (PATCH). */
  describeGrant(grantId: string, name: string | null, metadata: Record<string, unknown> | null): Promise<void>;
}
