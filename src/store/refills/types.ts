/**
 * Refills: each balance's refill settings (threshold and monthly), its refill bookkeeping (the
 * charge in flight, declines, pause) and the monthly refill schedule. They are columns of the
 * balance row (balances/types.ts reads them); only these methods write them. Refills are read
 * through the balance: there is no read of their own.
 */
import type { MonthlyRefillCount } from '../../domain/refills.js';
import type { BalanceRow } from '../balances/types.js';

export interface RefillSettings {
  refillThreshold: number | null;
  refillAmount: number | null;
  refillUsdCents: number | null;
  refillOnDay: string | null;
  refillMonthly: boolean;
  monthlyAnchorAtMs: number | null;
  nextRefillAtMs: number | null;
  /** Threshold refills allowed per UTC month (null: no cap). */
  refillMaxPerMonth: number | null;
}

/** The refill bookkeeping of a balance, as `updateRefillState` changes it: fields left out keep their values. */
export interface RefillStateChanges {
  refillChargeId?: string | null;
  consecutiveDeclines?: number;
  autoRefillPaused?: boolean;
  nextRefillAtMs?: number | null;
  /** Threshold refills started in a UTC month (domain/refills.ts countRefill). */
  refillsInMonth?: MonthlyRefillCount;
  /** The month whose `refill_capped` notification was written. */
  refillCappedMonthStartMs?: number;
}

export interface RefillsTx {
  /** Replaces the refill settings and monthly schedule of a (locked) balance. */
  updateRefillSettings(accountId: string, denomination: string, s: RefillSettings): Promise<void>;
  /** Updates the refill bookkeeping of a (locked) balance; fields left out keep their values. */
  updateRefillState(accountId: string, denomination: string, s: RefillStateChanges): Promise<void>;
  /**
   * Claims one balance whose monthly refill is due at `nowMs` and has no refill in flight,
   * locked until the transaction ends. PostgreSQL: `FOR UPDATE SKIP LOCKED`, so concurrent
   * workers take different balances; SQLite's single writer serialises them.
   */
  claimDueMonthlyRefill(nowMs: number): Promise<BalanceRow | undefined>;
}
