/** Prices: the row mapper and the SQL both databases share (mixed into SqlTx, sql-base.ts). */
import type { Page } from '../common.js';
import { num, type SqlBase, type SqlRow } from '../sql-core.js';
import type { PriceRow, PricesTx } from './types.js';

export const toPrice = (r: SqlRow): PriceRow => ({
  companyId: String(r.company_id),
  type: String(r.type),
  denomination: String(r.denomination),
  unitAmount: String(r.unit_amount),
  updatedAtMs: num(r.updated_at),
});

export function pricesSql<Base extends SqlBase>(base: Base) {
  abstract class PricesSql extends base implements PricesTx {
    async listPrices(companyId: string, page: Page) {
      const params: unknown[] = [companyId];
      let clause = '';
      if (page.startingAfter !== undefined) {
        if (
          !(await this.one('SELECT 1 AS x FROM prices WHERE company_id = ? AND type = ?', [
            companyId,
            page.startingAfter,
          ]))
        )
          return undefined;
        clause = ' AND type > ?';
        params.push(page.startingAfter);
      }
      const rows = await this.db.all(`SELECT * FROM prices WHERE company_id = ?${clause} ORDER BY type LIMIT ?`, [
        ...params,
        page.limit + 1,
      ]);
      return { rows: rows.slice(0, page.limit).map(toPrice), hasMore: rows.length > page.limit };
    }
    async findPrices(companyId: string, types: string[]) {
      if (types.length === 0) return [];
      const [inTypes, params] = this.inList('type', types);
      return (
        await this.db.all(`SELECT * FROM prices WHERE company_id = ? AND ${inTypes}`, [companyId, ...params])
      ).map(toPrice);
    }

    async upsertPrice(p: PriceRow) {
      await this.db.run(
        `INSERT INTO prices (company_id, type, denomination, unit_amount, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (company_id, type) DO UPDATE SET denomination = excluded.denomination, ` +
          'unit_amount = excluded.unit_amount, updated_at = excluded.updated_at',
        [p.companyId, p.type, p.denomination, p.unitAmount, p.updatedAtMs],
      );
    }
  }
  return PricesSql;
}
