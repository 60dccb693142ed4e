/**
 * Prices: a company's unit price of each event type, which turns an event's quantity into its
 * cost. A price belongs to a company, not to an account or a balance; it is read only to cost
 * events (`findPrices`, once per ingest group) and to list them.
 */
import type { Page, PageResult } from '../common.js';

export interface PriceRow {
  companyId: string;
  type: string;
  denomination: string;
  unitAmount: string;
  updatedAtMs: number;
}

export interface PricesReadTx {
  listPrices(companyId: string, page: Page): Promise<PageResult<PriceRow> | undefined>;
  findPrices(companyId: string, types: string[]): Promise<PriceRow[]>;
}

export interface PricesTx extends PricesReadTx {
  upsertPrice(row: PriceRow): Promise<void>;
}
