/** Prices: the row mapper and the SQL both databases share (mixed into SqlTx, sql-base.ts). */
import { formatDecimal, parseDecimal, type Decimal } from '../../lib/decimal.js';
import { pricePeriodKey } from '../../lib/keys.js';
import type { Page } from '../common.js';
import { num, type SqlBase, type SqlRow } from '../sql-core.js';
import type { PricePeriodCount, PricePeriodKey, PriceRow, PricesTx, PriceTerms, PriceVersionRow } from './types.js';

const PRICE_TERMS_COLUMNS = 'model, unit_amount, tiers, package_size, package_amount';

function termsOf(r: SqlRow): PriceTerms {
  const model = String(r.model);
  if (model === 'graduated') return { model, tiers: JSON.parse(String(r.tiers)) };
  if (model === 'package') return { model, packageSize: num(r.package_size), packageAmount: String(r.package_amount) };
  return { model: 'unit', unitAmount: String(r.unit_amount) };
}

/** The terms as PRICE_TERMS_COLUMNS values. */
function termsParams(t: PriceTerms): unknown[] {
  return [
    t.model,
    t.model === 'unit' ? t.unitAmount : null,
    t.model === 'graduated' ? JSON.stringify(t.tiers) : null,
    t.model === 'package' ? t.packageSize : null,
    t.model === 'package' ? t.packageAmount : null,
  ];
}

export const toPrice = (r: SqlRow): PriceRow => ({
  companyId: String(r.company_id),
  type: String(r.type),
  denomination: String(r.denomination),
  terms: termsOf(r),
  version: num(r.version),
  updatedAtMs: num(r.updated_at),
});

const toPriceVersion = (r: SqlRow): PriceVersionRow => ({
  ...toPrice({ ...r, updated_at: r.effective_from }),
  effectiveToMs: num(r.effective_to),
});

/** Most periods one statement names (their keys go as OR-ed triples). */
const PERIODS_PER_STATEMENT = 200;

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
    async findPrice(companyId: string, type: string) {
      const r = await this.one('SELECT * FROM prices WHERE company_id = ? AND type = ?', [companyId, type]);
      return r ? toPrice(r) : undefined;
    }
    async lockPrice(companyId: string, type: string) {
      const r = await this.one(`SELECT * FROM prices WHERE company_id = ? AND type = ?${this.forUpdate()}`, [
        companyId,
        type,
      ]);
      return r ? toPrice(r) : undefined;
    }
    async listPriceVersions(companyId: string, type: string, page: Page) {
      const params: unknown[] = [companyId, type];
      let clause = '';
      if (page.startingAfter !== undefined) {
        const version = /^[1-9]\d{0,8}$/.test(page.startingAfter) ? Number(page.startingAfter) : 0;
        if (
          !(await this.one('SELECT 1 AS x FROM price_versions WHERE company_id = ? AND type = ? AND version = ?', [
            companyId,
            type,
            version,
          ]))
        )
          return undefined;
        clause = ' AND version < ?';
        params.push(version);
      }
      const rows = await this.db.all(
        `SELECT * FROM price_versions WHERE company_id = ? AND type = ?${clause} ORDER BY version DESC LIMIT ?`,
        [...params, page.limit + 1],
      );
      return { rows: rows.slice(0, page.limit).map(toPriceVersion), hasMore: rows.length > page.limit };
    }
    async replacePrice(p: PriceRow, previous: PriceRow | undefined) {
      if (previous) {
        await this.db.run(
          `INSERT INTO price_versions (company_id, type, version, denomination, ${PRICE_TERMS_COLUMNS}, ` +
            'effective_from, effective_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [
            previous.companyId,
            previous.type,
            previous.version,
            previous.denomination,
            ...termsParams(previous.terms),
            previous.updatedAtMs,
            p.updatedAtMs,
          ],
        );
      }
      await this.db.run(
        `INSERT INTO prices (company_id, type, denomination, ${PRICE_TERMS_COLUMNS}, version, updated_at) ` +
          'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (company_id, type) DO UPDATE SET ' +
          'denomination = excluded.denomination, model = excluded.model, unit_amount = excluded.unit_amount, ' +
          'tiers = excluded.tiers, package_size = excluded.package_size, package_amount = excluded.package_amount, ' +
          'version = excluded.version, updated_at = excluded.updated_at',
        [p.companyId, p.type, p.denomination, ...termsParams(p.terms), p.version, p.updatedAtMs],
      );
    }

    async findPricePeriods(keys: PricePeriodKey[]) {
      return this.#periods(keys, '');
    }
    async lockPricePeriods(keys: PricePeriodKey[]) {
      const lock = this.forUpdate();
      // PostgreSQL: a period nobody counted yet has no row to lock; create it at 0 first, so that
      // two transactions pricing the same new period wait for each other.
      if (lock !== '' && keys.length > 0) {
        await this.db.run(
          'INSERT INTO price_periods (account_id, type, period_start, company_id, quantity) ' +
            `VALUES ${keys.map(() => "(?, ?, ?, ?, '0')").join(', ')} ON CONFLICT DO NOTHING`,
          keys.flatMap((k) => [k.accountId, k.type, k.periodMs, k.companyId]),
        );
      }
      return this.#periods(keys, lock);
    }
    async #periods(input: PricePeriodKey[], lock: string) {
      const out = new Map<string, Decimal>();
      const keys = [...new Map(input.map((k) => [pricePeriodKey(k), k])).values()].sort(
        (a, b) =>
          (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0) ||
          (a.type < b.type ? -1 : a.type > b.type ? 1 : 0) ||
          a.periodMs - b.periodMs,
      );
      for (let i = 0; i < keys.length; i += PERIODS_PER_STATEMENT) {
        const chunk = keys.slice(i, i + PERIODS_PER_STATEMENT);
        const rows = await this.db.all(
          `SELECT account_id, type, period_start, quantity FROM price_periods WHERE ${chunk
            .map(() => '(account_id = ? AND type = ? AND period_start = ?)')
            .join(' OR ')} ORDER BY account_id, type, period_start${lock}`,
          chunk.flatMap((k) => [k.accountId, k.type, k.periodMs]),
        );
        for (const r of rows) {
          const key = pricePeriodKey({
            accountId: String(r.account_id),
            type: String(r.type),
            periodMs: num(r.period_start),
          });
          out.set(key, parseDecimal(String(r.quantity))!);
        }
      }
      return out;
    }
    async putPricePeriods(rows: PricePeriodCount[]) {
      for (const r of rows) {
        await this.db.run(
          'INSERT INTO price_periods (account_id, type, period_start, company_id, quantity) VALUES (?, ?, ?, ?, ?) ' +
            'ON CONFLICT (account_id, type, period_start) DO UPDATE SET quantity = excluded.quantity',
          [r.accountId, r.type, r.periodMs, r.companyId, formatDecimal(r.quantity)],
        );
      }
    }
  }
  return PricesSql;
}
