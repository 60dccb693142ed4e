/**
 * Charges: the USD charges made to an account's card (refills, plans, overage, proration), their
 * settling, and the money-movement part of the ledger audit. The card is cards/; a balance's
 * refill settings and schedule, refills/.
 */
import type { AuditViolation, Page, PageResult } from '../common.js';

export type ChargeStatus = 'pending' | 'succeeded' | 'failed' | 'requires_payment_method' | 'requires_action';
export type ChargeReason = 'refill' | 'plan' | 'overage' | 'proration' | 'topup';

/** A USD charge to an account's card. The charge id is the processor idempotency key. */
export interface ChargeRow {
  chargeId: string;
  companyId: string;
  accountId: string;
  /** The balance it pays for (refill, proration); null for plan and overage charges. */
  denomination: string | null;
  reason: ChargeReason;
  usdCents: number;
  status: ChargeStatus;
  processorRef: string | null;
  failureCode: string | null;
  failureMessage: string | null;
  /**
   * What the charge pays for (refill: units; proration: the new settings; overage: units per
   * balance).
   */
  details: Record<string, unknown>;
  /** The ledger transaction it paid for (refill, proration), once it succeeded. */
  transactionId: string | null;
  /** The outbox row that carries it out (settling completes it). */
  outboxId: string | null;
  /** The grant a succeeded refill or proration added (what its receipt says it bought). */
  grantId: string | null;
  /** A succeeded charge's receipt `R-{n}`: n counts 1, 2, 3, … per company (`issueReceiptNumber`). */
  receiptNumber: number | null;
  receiptAtMs: number | null;
  /** Where the customer completes a charge that is `requires_action` (3-D Secure); null otherwise. */
  nextActionUrl: string | null;
  createdAtMs: number;
  updatedAtMs: number;
}

export type ChargeChanges = Partial<
  Pick<
    ChargeRow,
    | 'status'
    | 'processorRef'
    | 'failureCode'
    | 'failureMessage'
    | 'transactionId'
    | 'outboxId'
    | 'grantId'
    | 'receiptNumber'
    | 'receiptAtMs'
    | 'nextActionUrl'
  >
> & { updatedAtMs: number };

export interface ChargesReadTx {
  findCharge(chargeId: string): Promise<ChargeRow | undefined>;
  listCharges(accountId: string, page: Page): Promise<PageResult<ChargeRow> | undefined>;
  /**
   * The money-movement part of the audit: refill transactions and succeeded refill charges
   * match one to one (no refill without a successful charge), at most one refill in flight
   * per balance, succeeded proration charges each paid for one proration transaction, succeeded top-ups each added
   * their grant.
   */
  auditMoneyMovement(): Promise<AuditViolation[]>;
}

export interface ChargesTx extends ChargesReadTx {
  insertCharges(rows: ChargeRow[]): Promise<void>;
  /** Locks one charge for settling (PostgreSQL `FOR UPDATE`; lock its balance first). */
  lockCharge(chargeId: string): Promise<ChargeRow | undefined>;
  updateCharge(chargeId: string, changes: ChargeChanges): Promise<void>;
  /**
   * The company's next receipt number (1, 2, 3, …), taken in the transaction that records a charge's success: the
   * counter row stays locked until it commits (two processes' charges take turns; a rollback gives the number
   * back), so the numbers have no gap and no repeat.
   */
  issueReceiptNumber(companyId: string): Promise<number>;
  /** The account's charges waiting for a card, locked (PostgreSQL `FOR UPDATE`), oldest first. */
  lockChargesAwaitingCard(accountId: string): Promise<ChargeRow[]>;
}
