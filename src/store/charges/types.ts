/**
 * Charges and refills: an account's card, the USD charges made to it, and each balance's refill
 * settings, refill bookkeeping and monthly refill schedule (columns of the balance row).
 */
import type { BalanceRow } from '../accounts/types.js';
import type { AuditViolation, Page, PageResult } from '../common.js';

export type ChargeStatus = 'pending' | 'succeeded' | 'failed' | 'requires_payment_method';
export type ChargeReason = 'refill' | 'plan' | 'overage' | 'proration';

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
  createdAtMs: number;
  updatedAtMs: number;
}

export interface CardRow {
  accountId: string;
  companyId: string;
  paymentMethodId: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  createdAtMs: number;
}

export interface RefillSettings {
  refillThreshold: number | null;
  refillAmount: number | null;
  refillUsdCents: number | null;
  refillOnDay: string | null;
  refillMonthly: boolean;
  monthlyAnchorAtMs: number | null;
  nextRefillAtMs: number | null;
}

export type ChargeChanges = Partial<
  Pick<ChargeRow, 'status' | 'processorRef' | 'failureCode' | 'failureMessage' | 'transactionId' | 'outboxId'>
> & { updatedAtMs: number };

export interface ChargesReadTx {
  findCard(accountId: string): Promise<CardRow | undefined>;
  findCharge(chargeId: string): Promise<ChargeRow | undefined>;
  listCharges(accountId: string, page: Page): Promise<PageResult<ChargeRow> | undefined>;
  /**
   * The money-movement part of the audit: refill transactions and succeeded refill charges
   * match one to one (no refill without a successful charge), at most one refill in flight
   * per balance, succeeded proration charges each paid for one proration transaction.
   */
  auditMoneyMovement(): Promise<AuditViolation[]>;
}

export interface ChargesTx extends ChargesReadTx {
  upsertCard(row: CardRow): Promise<void>;
  /** Forgets the account's card (it belonged to a processor customer the account no longer has). */
  deleteCard(accountId: string): Promise<void>;
  insertCharges(rows: ChargeRow[]): Promise<void>;
  /** Locks one charge for settling (PostgreSQL `FOR UPDATE`; lock its balance first). */
  lockCharge(chargeId: string): Promise<ChargeRow | undefined>;
  updateCharge(chargeId: string, changes: ChargeChanges): Promise<void>;
  /** The account's charges waiting for a card, locked (PostgreSQL `FOR UPDATE`), oldest first. */
  lockChargesAwaitingCard(accountId: string): Promise<ChargeRow[]>;
  /** Replaces the refill settings and monthly schedule of a (locked) balance. */
  updateRefillSettings(accountId: string, denomination: string, s: RefillSettings): Promise<void>;
  /** Updates the refill bookkeeping of a (locked) balance; fields left out keep their values. */
  updateRefillState(
    accountId: string,
    denomination: string,
    s: {
      refillChargeId?: string | null;
      consecutiveDeclines?: number;
      autoRefillPaused?: boolean;
      nextRefillAtMs?: number | null;
    },
  ): Promise<void>;
  /**
   * Claims one balance whose monthly refill is due at `nowMs` and has no refill in flight,
   * locked until the transaction ends. PostgreSQL: `FOR UPDATE SKIP LOCKED`, so concurrent
   * workers take different balances; SQLite's single writer serialises them.
   */
  claimDueMonthlyRefill(nowMs: number): Promise<BalanceRow | undefined>;
}
