/** Credit packs: the row mapper and the SQL both databases share (topup-offers/types.ts). */
import { TOPUP_OFFERS_MAX } from '../../domain/topups.js';
import { SqlCore, num, numOrNull, type SqlRow } from '../sql-core.js';
import type { TopupOfferRow, TopupOffersTx } from './types.js';

const toOffer = (r: SqlRow): TopupOfferRow => ({
  companyId: String(r.company_id),
  offerId: String(r.offer_id),
  denomination: String(r.denomination),
  amount: num(r.amount),
  usdCents: num(r.usd_cents),
  name: String(r.name),
  priority: num(r.priority),
  expiresInDays: numOrNull(r.expires_in_days),
  createdAtMs: num(r.created_at),
  updatedAtMs: num(r.updated_at),
});

export class TopupOffersSql extends SqlCore implements TopupOffersTx {
  async findTopupOffer(companyId: string, offerId: string) {
    const r = await this.one('SELECT * FROM topup_offers WHERE company_id = ? AND offer_id = ?', [companyId, offerId]);
    return r && toOffer(r);
  }
  async listTopupOffers(companyId: string) {
    const rows = await this.db.all('SELECT * FROM topup_offers WHERE company_id = ? ORDER BY offer_id LIMIT ?', [
      companyId,
      TOPUP_OFFERS_MAX,
    ]);
    return rows.map(toOffer);
  }
  async putTopupOffer(o: TopupOfferRow) {
    await this.db.run(
      'INSERT INTO topup_offers (company_id, offer_id, denomination, amount, usd_cents, name, priority, ' +
        'expires_in_days, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ' +
        'ON CONFLICT (company_id, offer_id) DO UPDATE SET denomination = excluded.denomination, ' +
        'amount = excluded.amount, usd_cents = excluded.usd_cents, name = excluded.name, ' +
        'priority = excluded.priority, expires_in_days = excluded.expires_in_days, updated_at = excluded.updated_at',
      [
        o.companyId,
        o.offerId,
        o.denomination,
        o.amount,
        o.usdCents,
        o.name,
        o.priority,
        o.expiresInDays,
        o.createdAtMs,
        o.updatedAtMs,
      ],
    );
  }
  async deleteTopupOffer(companyId: string, offerId: string) {
    return (
      (await this.db.run('DELETE FROM topup_offers WHERE company_id = ? AND offer_id = ?', [companyId, offerId])) > 0
    );
  }
}
