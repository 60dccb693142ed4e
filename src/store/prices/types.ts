/**
 * Prices: a company's price of each event type (unit, graduated or package terms), which turns an
 * event's quantity into its cost; the earlier versions of each, with the span each applied in; and
 * the period counts that graduated and package prices price against (per account, type and UTC
 * month: the exact quantity of the completed events they priced). A price is read to cost events
 * (`findPrices`, once per ingest group) and to list them.
 */
import type { Decimal } from '../../lib/decimal.js';
import type { Page, PageResult } from '../common.js';

/** A price's terms by model (domain/pricing.ts has the same shape, and the rules). */
export type PriceTerms =
  | { model: 'unit'; unitAmount: string }
  | { model: 'graduated'; tiers: { upTo: number | null; unitAmount: string; flatAmount: string | null }[] }
  | { model: 'package'; packageSize: number; packageAmount: string };

/** One period of a graduated or package price (domain/events.ts has the same shape). */
export interface PricePeriodKey {
  companyId: string;
  accountId: string;
  type: string;
  /** The start of the UTC calendar month (epoch ms). */
  periodMs: number;
}

export interface PricePeriodCount extends PricePeriodKey {
  quantity: Decimal;
}

export interface PriceRow {
  companyId: string;
  type: string;
  denomination: string;
  terms: PriceTerms;
  /** 1 for a type's first price, one more for each change. */
  version: number;
  /** When this version took effect. */
  updatedAtMs: number;
}

/** An earlier price of a type, with the span [effectiveFromMs, effectiveToMs) it applied in. */
export interface PriceVersionRow extends PriceRow {
  effectiveToMs: number;
}

export interface PricesReadTx {
  listPrices(companyId: string, page: Page): Promise<PageResult<PriceRow> | undefined>;
  findPrices(companyId: string, types: string[]): Promise<PriceRow[]>;
  findPrice(companyId: string, type: string): Promise<PriceRow | undefined>;
  /** Earlier versions, newest first; the cursor is a version number. Undefined: unknown cursor. */
  listPriceVersions(companyId: string, type: string, page: Page): Promise<PageResult<PriceVersionRow> | undefined>;
  /** The completed quantity of each of these periods that has one (pricePeriodKey). */
  findPricePeriods(keys: PricePeriodKey[]): Promise<Map<string, Decimal>>;
}

export interface PricesTx extends PricesReadTx {
  /** The type's price, locked (PostgreSQL `FOR UPDATE`) until the transaction ends. */
  lockPrice(companyId: string, type: string): Promise<PriceRow | undefined>;
  /** Makes `row` the type's price; `previous` (its earlier version, if any) goes to the history. */
  replacePrice(row: PriceRow, previous: PriceRow | undefined): Promise<void>;
  /**
   * As findPricePeriods, with the periods locked until the transaction ends (PostgreSQL: created at 0 where
   * missing and locked by one upsert, in one key order), so that two transactions never price against one count.
   */
  lockPricePeriods(keys: PricePeriodKey[]): Promise<Map<string, Decimal>>;
  /** Sets the completed quantity of each period. */
  putPricePeriods(rows: PricePeriodCount[]): Promise<void>;
}
