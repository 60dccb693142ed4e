/**
 * Refills: the SQL both databases share (mixed into SqlTx, sql-base.ts) on the refill columns of
 * the balance row; a claimed balance reads as any balance does (toBalance, balances/sql.ts).
 */
import { toBalance } from '../balances/sql.js';
import { SqlCore } from '../sql-core.js';
import type { RefillSettings, RefillStateChanges, RefillsTx } from './types.js';

export class RefillsSql extends SqlCore implements RefillsTx {
  async updateRefillSettings(accountId: string, denomination: string, s: RefillSettings) {
    await this.db.run(
      'UPDATE balances SET refill_threshold = ?, refill_amount = ?, refill_usd_amount = ?, refill_on_day = ?, ' +
        `refill_monthly = ?, monthly_anchor_at = ?, next_refill_at = ?, refill_max_per_month = ?
     WHERE account_id = ? AND denomination = ?`,
      [
        s.refillThreshold,
        s.refillAmount,
        s.refillUsdCents,
        s.refillOnDay,
        this.bool(s.refillMonthly),
        s.monthlyAnchorAtMs,
        s.nextRefillAtMs,
        s.refillMaxPerMonth,
        accountId,
        denomination,
      ],
    );
  }
  async updateRefillState(accountId: string, denomination: string, s: RefillStateChanges) {
    const sets: string[] = [];
    const params: unknown[] = [];
    if (s.refillChargeId !== undefined) {
      sets.push('refill_charge_id = ?');
      params.push(s.refillChargeId);
    }
    if (s.consecutiveDeclines !== undefined) {
      sets.push('consecutive_declines = ?');
      params.push(s.consecutiveDeclines);
    }
    if (s.autoRefillPaused !== undefined) {
      sets.push('auto_refill_paused = ?');
      params.push(this.bool(s.autoRefillPaused));
    }
    if (s.nextRefillAtMs !== undefined) {
      sets.push('next_refill_at = ?');
      params.push(s.nextRefillAtMs);
    }
    if (s.refillsInMonth !== undefined) {
      sets.push('refills_month_start = ?', 'refills_in_month = ?');
      params.push(s.refillsInMonth.monthStartMs, s.refillsInMonth.count);
    }
    if (s.refillCappedMonthStartMs !== undefined) {
      sets.push('refill_capped_month = ?');
      params.push(s.refillCappedMonthStartMs);
    }
    if (sets.length === 0) return;
    await this.db.run(`UPDATE balances SET ${sets.join(', ')} WHERE account_id = ? AND denomination = ?`, [
      ...params,
      accountId,
      denomination,
    ]);
  }
  async claimDueMonthlyRefill(nowMs: number) {
    const r = await this.one(
      `SELECT * FROM balances WHERE next_refill_at IS NOT NULL AND next_refill_at <= ? AND refill_charge_id IS NULL
     ORDER BY next_refill_at LIMIT 1${this.skipLocked()}`,
      [nowMs],
    );
    return r && toBalance(r);
  }
}
