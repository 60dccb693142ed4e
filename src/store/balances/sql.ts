/**
 * Balances: the row mapper and the SQL both databases share (mixed into SqlTx, sql-base.ts).
 * Locking balances and applying deltas differ by dialect: sqlite/tx.ts, postgres/tx.ts.
 */
import type { SpendLimits } from '../../domain/spend.js';
import { balanceKey } from '../../lib/keys.js';
import { decodeStoredLots, derivedLot, encodeLots, storesSame } from '../grants/sql.js';
import type { Grant } from '../grants/types.js';
import { SqlCore, num, numOrNull, strOrNull, type SqlRow } from '../sql-core.js';
import type { BalanceDelta, BalanceKey, BalanceRow, BalancesTx, NewBalanceRow } from './types.js';

/**
 * A balance row as the store reads it: with how its grants are stored (grants/sql.ts encodeLots) and
 * the one whose remaining the text leaves out (-1: none). Given back as the `from` of a delta, it lets a
 * write keep the text as it is; nothing outside the store names these fields.
 */
interface StoredBalanceRow extends BalanceRow {
  grantsText: string;
  grantsHead: number;
}

export const toBalance = (r: SqlRow): BalanceRow => balanceOf(r, undefined);

/** What a delta leaves in its row's grants column (storedLotsOf): `written` false where the text stays. */
export interface StoredLots {
  text: string;
  head: number;
  written: boolean;
}

/** The balances a write of deltas changes, by key: their lots after it and how the row stores them. */
export type WrittenLots = Map<string, { lots: Grant[]; stored: StoredLots }>;

/**
 * The grants each delta writes (the last delta of a balance, as applied last): the rows the write
 * returns (toBalanceAfter) take these lots as they are instead of parsing the text again.
 */
export function writtenLots(deltas: readonly BalanceDelta[]): WrittenLots {
  const written: WrittenLots = new Map();
  for (const d of deltas) {
    const stored = storedLotsOf(d);
    if (stored !== undefined) written.set(balanceKey(d.accountId, d.denomination), { lots: d.grants!, stored });
  }
  return written;
}

/**
 * Every column of a balance row but its grants text: what a write reads back where it knows the
 * text it left (every delta of it gives grants, writtenLots). The text of three grants is about
 * four times the rest of the row.
 */
export const BALANCE_COLUMNS_BUT_GRANTS =
  'account_id, denomination, company_id, amount, pending, refill_threshold, refill_amount, refill_usd_amount, ' +
  'refill_on_day, created_at, refill_monthly, monthly_anchor_at, next_refill_at, refill_charge_id, ' +
  'consecutive_declines, auto_refill_paused, plan_included, plan_alert_percentage, plan_alerted, grants_due_at, ' +
  'spend_day_start, spend_day, spend_month_start, spend_month, limit_daily, limit_monthly, ' +
  'refill_max_per_month, refills_month_start, refills_in_month, refill_capped_month, alert_count, alert_watch';

const B_COLUMNS_BUT_GRANTS = BALANCE_COLUMNS_BUT_GRANTS.replace(/(^|, )/g, '$1b.');

/** The columns a write reads back (of table alias `b.`, PostgreSQL's): all where a delta gives no grants. */
export function columnsAfter(deltas: readonly BalanceDelta[], alias?: 'b.'): string {
  if (deltas.some((d) => d.grants === undefined)) return alias === undefined ? '*' : 'b.*';
  return alias === undefined ? BALANCE_COLUMNS_BUT_GRANTS : B_COLUMNS_BUT_GRANTS;
}

/** The rows a write returns (applyBalanceDeltas), given what it wrote (writtenLots). */
export function toBalanceAfter(written: WrittenLots): (r: SqlRow) => BalanceRow {
  return (r) => balanceOf(r, written);
}

const balanceOf = (r: SqlRow, written: WrittenLots | undefined): StoredBalanceRow => {
  const w = written?.get(balanceKey(String(r.account_id), String(r.denomination)));
  const decoded = w === undefined ? decodeStoredLots(r.grants, num(r.amount)) : undefined;
  return {
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
    grants: w?.lots ?? decoded!.lots,
    grantsDueAtMs: numOrNull(r.grants_due_at),
    grantsText: w?.stored.text ?? String(r.grants),
    grantsHead: w?.stored.head ?? decoded!.head,
    spend: {
      dayStartMs: num(r.spend_day_start ?? 0),
      day: num(r.spend_day ?? 0),
      monthStartMs: num(r.spend_month_start ?? 0),
      month: num(r.spend_month ?? 0),
    },
    limits: { daily: numOrNull(r.limit_daily), monthly: numOrNull(r.limit_monthly) },
    alertCount: num(r.alert_count ?? 0),
    alertWatch: strOrNull(r.alert_watch),
    // Money movement: every field always filled, in one object literal (no spread of another per row).
    refillMonthly: Boolean(r.refill_monthly),
    monthlyAnchorAtMs: numOrNull(r.monthly_anchor_at),
    nextRefillAtMs: numOrNull(r.next_refill_at),
    refillChargeId: strOrNull(r.refill_charge_id),
    consecutiveDeclines: num(r.consecutive_declines ?? 0),
    autoRefillPaused: Boolean(r.auto_refill_paused),
    refillMaxPerMonth: numOrNull(r.refill_max_per_month),
    refillsInMonth: { monthStartMs: num(r.refills_month_start ?? 0), count: num(r.refills_in_month ?? 0) },
    refillCappedMonthStartMs: numOrNull(r.refill_capped_month),
    planIncluded: numOrNull(r.plan_included),
    planAlertPercentage: strOrNull(r.plan_alert_percentage),
    planAlerted: Boolean(r.plan_alerted),
  };
};

/**
 * What a delta leaves in the row's `grants` column, or undefined where it gives no grants (the
 * text stays). Where the delta's grants store as the locked row's text did (storesSame: as when
 * all of a group's events on the balance draw from the grant being drawn), the text stays, and
 * nothing is encoded.
 */
export function storedLotsOf(d: BalanceDelta): StoredLots | undefined {
  if (d.grants === undefined) return undefined;
  if (d.from === undefined) return { text: encodeLots(d.grants), head: -1, written: true };
  const amount = d.from.amount + d.amount;
  const { grantsText, grantsHead } = d.from as Partial<StoredBalanceRow>;
  if (grantsText !== undefined && grantsHead !== undefined && storesSame(d.from.grants, grantsHead, d.grants, amount))
    return { text: grantsText, head: grantsHead, written: false };
  const text = encodeLots(d.grants, amount);
  return { text, head: derivedLot(d.grants, amount), written: text !== grantsText };
}

export class BalancesSql extends SqlCore implements BalancesTx {
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

  async setSpendLimits(accountId: string, denomination: string, limits: SpendLimits) {
    const changed = await this.db.run(
      'UPDATE balances SET limit_daily = ?, limit_monthly = ? WHERE account_id = ? AND denomination = ?',
      [limits.daily, limits.monthly, accountId, denomination],
    );
    return changed > 0;
  }
}
