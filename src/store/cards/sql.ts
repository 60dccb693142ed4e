/** Cards: the row mapper and the SQL both databases share (mixed into SqlTx, sql-base.ts). */
import { SqlCore, num, type SqlRow } from '../sql-core.js';
import type { CardRow, CardsTx } from './types.js';

const toCard = (r: SqlRow): CardRow => ({
  accountId: String(r.account_id),
  companyId: String(r.company_id),
  paymentMethodId: String(r.payment_method_id),
  brand: String(r.brand),
  last4: String(r.last4),
  expMonth: num(r.exp_month),
  expYear: num(r.exp_year),
  createdAtMs: num(r.created_at),
});

export class CardsSql extends SqlCore implements CardsTx {
  async findCard(accountId: string) {
    const r = await this.one('SELECT * FROM cards WHERE account_id = ?', [accountId]);
    return r && toCard(r);
  }

  async upsertCard(c: CardRow) {
    await this.db.run(
      'INSERT INTO cards (account_id, company_id, payment_method_id, brand, last4, exp_month, exp_year, ' +
        `created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (account_id) DO UPDATE SET payment_method_id = excluded.payment_method_id, ` +
        `brand = excluded.brand, last4 = excluded.last4,
       exp_month = excluded.exp_month, exp_year = excluded.exp_year, created_at = excluded.created_at`,
      [c.accountId, c.companyId, c.paymentMethodId, c.brand, c.last4, c.expMonth, c.expYear, c.createdAtMs],
    );
  }
  async deleteCard(accountId: string) {
    await this.db.run('DELETE FROM cards WHERE account_id = ?', [accountId]);
  }
}
