/** Prices: the row mapper and the SQL both databases share (mixed into SqlTx, sql-base.ts). */
import { formatDecimal, parseDecimal, type Decimal } from '../../lib/decimal.js';
import { pricePeriodKey } from '../../lib/keys.js';
import type { Page } from '../common.js';
import { SqlCore, num, type SqlRow } from '../sql-core.js';
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

/** Most periods one statement names (OR-ed triples, or rows of a VALUES list). */
const PERIODS_PER_STATEMENT = 200;

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += PERIODS_PER_STATEMENT) out.push(items.slice(i, i + PERIODS_PER_STATEMENT));
  return out;
}

/** Each period once, in one order (account, type, month) that every locker uses. */
function sortedPeriods(keys: PricePeriodKey[]): PricePeriodKey[] {
  return [...new Map(keys.map((k) => [pricePeriodKey(k), k])).values()].sort(
    (a, b) =>
      (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0) ||
      (a.type < b.type ? -1 : a.type > b.type ? 1 : 0) ||
      a.periodMs - b.periodMs,
  );
}

const periodKeyOf = (r: SqlRow): string =>
  pricePeriodKey({ accountId: String(r.account_id), type: String(r.type), periodMs: num(r.period_start) });

export class PricesSql extends SqlCore implements PricesTx {
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
    return (await this.db.all(`SELECT * FROM prices WHERE company_id = ? AND ${inTypes}`, [companyId, ...params])).map(
      toPrice,
    );
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
    const out = new Map<string, Decimal>();
    for (const chunk of chunks(sortedPeriods(keys))) {
      const rows = await this.db.all(
        `SELECT account_id, type, period_start, quantity FROM price_periods WHERE ${chunk
          .map(() => '(account_id = ? AND type = ? AND period_start = ?)')
          .join(' OR ')}`,
        chunk.flatMap((k) => [k.accountId, k.type, k.periodMs]),
      );
      for (const r of rows) out.set(periodKeyOf(r), parseDecimal(String(r.quantity))!);
    }
    return out;
  }
  async lockPricePeriods(keys: PricePeriodKey[]) {
    // SQLite: the write transaction holds the database; a read is enough.
    if (this.forUpdate() === '') return this.findPricePeriods(keys);
    // PostgreSQL: one statement creates the periods nobody counted yet (at 0) and locks every one, in one order
    // for every transaction (so two never wait on each other in a cycle); an update that changes nothing is
    // how an existing row is locked and returned by the same statement.
    const out = new Map<string, Decimal>();
    for (const chunk of chunks(sortedPeriods(keys))) {
      const rows = await this.db.all(
        'INSERT INTO price_periods (account_id, type, period_start, company_id, quantity) ' +
          `VALUES ${chunk.map(() => "(?, ?, ?, ?, '0')").join(', ')} ` +
          'ON CONFLICT (account_id, type, period_start) DO UPDATE SET quantity = price_periods.quantity ' +
          'RETURNING account_id, type, period_start, quantity',
        chunk.flatMap((k) => [k.accountId, k.type, k.periodMs, k.companyId]),
      );
      for (const r of rows) out.set(periodKeyOf(r), parseDecimal(String(r.quantity))!);
    }
    return out;
  }
  /** One statement per chunk of periods (a group commit writes each period it priced once). */
  async putPricePeriods(rows: PricePeriodCount[]) {
    for (const chunk of chunks(rows)) {
      await this.db.run(
        'INSERT INTO price_periods (account_id, type, period_start, company_id, quantity) ' +
          `VALUES ${chunk.map(() => '(?, ?, ?, ?, ?)').join(', ')} ` +
          'ON CONFLICT (account_id, type, period_start) DO UPDATE SET quantity = excluded.quantity',
        chunk.flatMap((r) => [r.accountId, r.type, r.periodMs, r.companyId, formatDecimal(r.quantity)]),
      );
    }
  }
}
