/**
 * Balances: the row mapper and the SQL both databases share (mixed into SqlTx, sql-base.ts).
 * Locking balances and applying deltas differ by dialect: sqlite/tx.ts, postgres/tx.ts.
 */
import { balanceKey } from '../../lib/keys.js';
import { decodeLots, encodeLots } from '../grants/sql.js';
import type { GrantLot } from '../grants/types.js';
import { num, numOrNull, strOrNull, type SqlBase, type SqlRow } from '../sql-core.js';
import type { BalanceDelta, BalanceKey, BalanceRow, BalancesTx, NewBalanceRow } from './types.js';

export const toBalance = (r: SqlRow): BalanceRow => balanceOf(r, undefined);

/**
 * The rows a write of `deltas` returns (applyBalanceDeltas): the row's grants text then decodes to
 * exactly the grants the delta gave (storedLotsOf), which are used as they are instead of parsed again.
 */
export function toBalanceAfter(deltas: readonly BalanceDelta[]): (r: SqlRow) => BalanceRow {
  const written = new Map<string, GrantLot[]>();
  for (const d of deltas) if (d.grants !== undefined) written.set(balanceKey(d.accountId, d.denomination), d.grants);
  return (r) => balanceOf(r, written);
}

const balanceOf = (r: SqlRow, written: Map<string, GrantLot[]> | undefined): BalanceRow => ({
  accountId: String(r.account_id),
  companyId: String(r.company_id),
  denomination: String(r.denomination),
  amount: num(r.amount),
  pending: num(r.pending),
  refillThreshold: numOrNull(r.refill_threshold),
  refillAmount: numOrNull(r.refill_amount),
  refillUsdCents: numOrNull(r.refill_usd_amount),
  refillOnDay: strOrNull(r.refill_on_day),
  createdAtMs: num(r.created_at),
  grants: written?.get(balanceKey(String(r.account_id), String(r.denomination))) ?? decodeLots(r.grants, num(r.amount)),
  grantsDueAtMs: numOrNull(r.grants_due_at),
  grantsText: String(r.grants),
  // Money movement: every field always filled, in one object literal (no spread of another per row).
  refillMonthly: Boolean(r.refill_monthly),
  monthlyAnchorAtMs: numOrNull(r.monthly_anchor_at),
  nextRefillAtMs: numOrNull(r.next_refill_at),
  refillChargeId: strOrNull(r.refill_charge_id),
  consecutiveDeclines: num(r.consecutive_declines ?? 0),
  autoRefillPaused: Boolean(r.auto_refill_paused),
  planIncluded: numOrNull(r.plan_included),
  planAlertPercentage: strOrNull(r.plan_alert_percentage),
  planAlerted: Boolean(r.plan_alerted),
});

/**
 * The `grants` text a delta writes, or null where the row's stays: no grants given, or the same text
 * as the row's, as when all of a group's events on the balance draw from the grant being drawn.
 */
export function storedLotsOf(d: BalanceDelta): string | null {
  if (d.grants === undefined) return null;
  if (d.from === undefined) return encodeLots(d.grants);
  const text = encodeLots(d.grants, d.from.amount + d.amount);
  return text === d.from.grantsText ? null : text;
}

export function balancesSql<Base extends SqlBase>(base: Base) {
  abstract class BalancesSql extends base implements BalancesTx {
    async findBalance(accountId: string, denomination: string) {
      const r = await this.one('SELECT * FROM balances WHERE account_id = ? AND denomination = ?', [
        accountId,
        denomination,
      ]);
      return r && toBalance(r);
    }
    async listBalances(accountId: string) {
      return (await this.db.all('SELECT * FROM balances WHERE account_id = ? ORDER BY denomination', [accountId])).map(
        toBalance,
      );
    }
    async listBalancesOfAccounts(accountIds: string[]) {
      if (accountIds.length === 0) return [];
      const [inIds, params] = this.inList('account_id', accountIds);
      return (await this.db.all(`SELECT * FROM balances WHERE ${inIds} ORDER BY account_id, denomination`, params)).map(
        toBalance,
      );
    }

    async scanBalances(after: BalanceKey | undefined, limit: number) {
      const rows =
        after === undefined
          ? await this.db.all('SELECT * FROM balances ORDER BY account_id, denomination LIMIT ?', [limit])
          : await this.db.all(
              'SELECT * FROM balances WHERE account_id > ? OR (account_id = ? AND denomination > ?) ' +
                'ORDER BY account_id, denomination LIMIT ?',
              [after.accountId, after.accountId, after.denomination, limit],
            );
      return rows.map(toBalance);
    }

    async insertBalance(b: NewBalanceRow) {
      const changed = await this.db.run(
        'INSERT INTO balances (account_id, denomination, company_id, amount, pending, refill_threshold, ' +
          `refill_amount, refill_usd_amount, refill_on_day, created_at)
       VALUES (?, ?, ?, 0, 0, ?, ?, ?, ?, ?) ON CONFLICT (account_id, denomination) DO NOTHING`,
        [
          b.accountId,
          b.denomination,
          b.companyId,
          b.refillThreshold,
          b.refillAmount,
          b.refillUsdCents,
          b.refillOnDay,
          b.createdAtMs,
        ],
      );
      return changed > 0;
    }
    /** The dialect's: PostgreSQL locks `FOR UPDATE` in key order; SQLite's writer holds the only lock. */
    abstract lockBalances(keys: BalanceKey[]): Promise<BalanceRow[]>;
    abstract applyBalanceDeltas(deltas: BalanceDelta[]): Promise<BalanceRow[]>;
  }
  return BalancesSql;
}
