/** Charges: the row mapper and the SQL both databases share (mixed into SqlTx, sql-base.ts). */
import type { AuditViolation, Page } from '../common.js';
import { SqlCore, num, numOrNull, strOrNull, type SqlRow } from '../sql-core.js';
import type { ChargeChanges, ChargeRow, ChargesTx } from './types.js';

export const toCharge = (r: SqlRow): ChargeRow => ({
  chargeId: String(r.charge_id),
  companyId: String(r.company_id),
  accountId: String(r.account_id),
  denomination: strOrNull(r.denomination),
  reason: String(r.reason) as ChargeRow['reason'],
  usdCents: num(r.usd_cents),
  status: String(r.status) as ChargeRow['status'],
  processorRef: strOrNull(r.processor_ref),
  failureCode: strOrNull(r.failure_code),
  failureMessage: strOrNull(r.failure_message),
  details: JSON.parse(String(r.details)) as Record<string, unknown>,
  transactionId: strOrNull(r.transaction_id),
  outboxId: strOrNull(r.outbox_id),
  grantId: strOrNull(r.grant_id),
  receiptNumber: numOrNull(r.receipt_number),
  receiptAtMs: numOrNull(r.receipt_at),
  nextActionUrl: strOrNull(r.next_action_url),
  createdAtMs: num(r.created_at),
  updatedAtMs: num(r.updated_at),
});

export class ChargesSql extends SqlCore implements ChargesTx {
  async findCharge(chargeId: string) {
    const r = await this.one('SELECT * FROM charges WHERE charge_id = ?', [chargeId]);
    return r && toCharge(r);
  }
  listCharges(accountId: string, page: Page) {
    return this.pageBySeq('charges', 'charge_id', [['account_id', accountId]], page, toCharge);
  }
  async auditMoneyMovement(): Promise<AuditViolation[]> {
    const out: AuditViolation[] = [];
    const unpaid = await this.db.all(
      `
    SELECT t.account_id, t.denomination, t.transaction_id FROM transactions t
    WHERE t.kind = 'refill' AND NOT EXISTS (
      SELECT 1 FROM charges c WHERE c.transaction_id = t.transaction_id AND c.reason = 'refill' ` +
        `AND c.status = 'succeeded'
        AND c.account_id = t.account_id AND c.denomination = t.denomination)`,
    );
    for (const r of unpaid)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination),
        problem: `refill ${r.transaction_id} without a successful charge`,
      });
    const unrefilled = await this.db.all(`
    SELECT c.account_id, c.denomination, c.charge_id FROM charges c
    WHERE c.reason = 'refill' AND c.status = 'succeeded' AND NOT EXISTS (
      SELECT 1 FROM transactions t WHERE t.transaction_id = c.transaction_id AND t.kind = 'refill')`);
    for (const r of unrefilled)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination ?? ''),
        problem: `succeeded refill charge ${r.charge_id} added no refill`,
      });
    const shared = await this.db.all(
      `
    SELECT MIN(account_id) AS account_id, MIN(denomination) AS denomination, transaction_id, COUNT(*) AS n ` +
        `FROM charges
    WHERE transaction_id IS NOT NULL GROUP BY transaction_id HAVING COUNT(*) > 1`,
    );
    for (const r of shared)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination ?? ''),
        problem: `transaction ${r.transaction_id} paid by ${r.n} charges`,
      });
    const inFlight = await this.db.all(`
    SELECT account_id, denomination, COUNT(*) AS n FROM charges WHERE reason = 'refill' AND status = 'pending'
    GROUP BY account_id, denomination HAVING COUNT(*) > 1`);
    for (const r of inFlight)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination),
        problem: `${r.n} refills in flight at once`,
      });
    const marker = await this.db.all(`
    SELECT b.account_id, b.denomination, b.refill_charge_id FROM balances b
    LEFT JOIN charges c ON c.charge_id = b.refill_charge_id AND c.status = 'pending'
    WHERE b.refill_charge_id IS NOT NULL AND c.charge_id IS NULL`);
    for (const r of marker)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination),
        problem: `in-flight marker ${r.refill_charge_id} names no pending charge`,
      });
    const proration = await this.db.all(`
    SELECT c.account_id, c.denomination, c.charge_id FROM charges c
    WHERE c.reason = 'proration' AND c.status = 'succeeded' AND NOT EXISTS (
      SELECT 1 FROM transactions t WHERE t.transaction_id = c.transaction_id AND t.kind = 'proration')`);
    for (const r of proration)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination ?? ''),
        problem: `succeeded proration charge ${r.charge_id} changed no balance`,
      });
    const topups = await this.db.all(`
    SELECT c.account_id, c.denomination, c.charge_id FROM charges c
    WHERE c.reason = 'topup' AND c.status = 'succeeded' AND NOT EXISTS (
      SELECT 1 FROM grants g WHERE g.grant_id = c.grant_id AND g.source = 'topup' AND g.account_id = c.account_id)`);
    for (const r of topups)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination ?? ''),
        problem: `succeeded top-up charge ${r.charge_id} added no grant`,
      });
    return out;
  }

  async insertCharges(rows: ChargeRow[]) {
    for (const c of rows) {
      await this.db.run(
        'INSERT INTO charges (charge_id, company_id, account_id, denomination, reason, usd_cents, status, ' +
          'processor_ref, failure_code, failure_message, details, transaction_id, outbox_id, created_at, ' +
          `updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          c.chargeId,
          c.companyId,
          c.accountId,
          c.denomination,
          c.reason,
          c.usdCents,
          c.status,
          c.processorRef,
          c.failureCode,
          c.failureMessage,
          JSON.stringify(c.details),
          c.transactionId,
          c.outboxId,
          c.createdAtMs,
          c.updatedAtMs,
        ],
      );
    }
  }
  async lockCharge(chargeId: string) {
    const r = await this.one(`SELECT * FROM charges WHERE charge_id = ?${this.forUpdate()}`, [chargeId]);
    return r && toCharge(r);
  }
  async updateCharge(chargeId: string, ch: ChargeChanges) {
    const sets: string[] = ['updated_at = ?'];
    const params: unknown[] = [ch.updatedAtMs];
    const cols: [keyof ChargeChanges, string][] = [
      ['status', 'status'],
      ['processorRef', 'processor_ref'],
      ['failureCode', 'failure_code'],
      ['failureMessage', 'failure_message'],
      ['transactionId', 'transaction_id'],
      ['outboxId', 'outbox_id'],
      ['grantId', 'grant_id'],
      ['receiptNumber', 'receipt_number'],
      ['receiptAtMs', 'receipt_at'],
      ['nextActionUrl', 'next_action_url'],
    ];
    for (const [k, col] of cols) {
      if (ch[k] !== undefined) {
        sets.push(`${col} = ?`);
        params.push(ch[k]);
      }
    }
    await this.db.run(`UPDATE charges SET ${sets.join(', ')} WHERE charge_id = ?`, [...params, chargeId]);
  }
  async issueReceiptNumber(companyId: string) {
    const r = await this.one(
      'INSERT INTO receipt_counters (company_id, last_number) VALUES (?, 1) ON CONFLICT (company_id) ' +
        'DO UPDATE SET last_number = receipt_counters.last_number + 1 RETURNING last_number',
      [companyId],
    );
    return num(r!.last_number);
  }
  async lockChargesAwaitingCard(accountId: string) {
    return (
      await this.db.all(
        `SELECT * FROM charges WHERE account_id = ? AND status = 'requires_payment_method' ` +
          `ORDER BY seq${this.forUpdate()}`,
        [accountId],
      )
    ).map(toCharge);
  }
}
