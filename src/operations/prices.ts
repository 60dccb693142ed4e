/**
 * Prices of a company's event types: set (unit, graduated or package terms, exact decimals), read,
 * listed, and their history. A change that alters the terms makes a new version and keeps the old
 * one with the span it applied in; a PUT of the terms already in force changes nothing.
 */
import { fail } from '../domain/outcome.js';
import { parsePriceTerms, sameTerms, type PriceInput } from '../domain/pricing.js';
import type { Page, PageResult, PriceRow, PriceVersionRow } from '../store/types.js';
import type { Command, Deps } from './deps.js';
import { unknownCursor } from './lookups.js';

export async function putPrice(
  deps: Deps,
  companyId: string,
  type: string,
  input: PriceInput & { denomination: string },
): Promise<Command<PriceRow>> {
  const terms = parsePriceTerms(input);
  if (!terms.ok) fail(terms.reason, terms.message, terms.param);
  return async (tx) => {
    const previous = await tx.prices.lockPrice(companyId, type);
    if (previous && previous.denomination === input.denomination && sameTerms(previous.terms, terms.value))
      return previous;
    const row: PriceRow = {
      companyId,
      type,
      denomination: input.denomination,
      terms: terms.value,
      version: (previous?.version ?? 0) + 1,
      updatedAtMs: deps.clock.now(),
    };
    await tx.prices.replacePrice(row, previous);
    return row;
  };
}

function noPrice(type: string): never {
  fail('not_found', `no price for type "${type}"`, 'type');
}

export async function getPrice(deps: Deps, companyId: string, type: string): Promise<PriceRow> {
  return (await deps.store.read((tx) => tx.prices.findPrice(companyId, type))) ?? noPrice(type);
}

export async function listPrices(deps: Deps, companyId: string, page: Page): Promise<PageResult<PriceRow>> {
  return (await deps.store.read((tx) => tx.prices.listPrices(companyId, page))) ?? unknownCursor();
}

/** The type's earlier prices, newest first (the one in force is GET /v1/prices/{type}). */
export async function listPriceVersions(
  deps: Deps,
  companyId: string,
  type: string,
  page: Page,
): Promise<PageResult<PriceVersionRow>> {
  const found = await deps.store.read(async (tx) => {
    if (!(await tx.prices.findPrice(companyId, type))) return null;
    return tx.prices.listPriceVersions(companyId, type, page);
  });
  if (found === null) noPrice(type);
  return found ?? unknownCursor();
}
