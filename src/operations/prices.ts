/** Prices of a company's event types: set (exact decimals) and listed. */
import { fail } from '../domain/outcome.js';
import { parseUnitAmount } from '../domain/pricing.js';
import type { Page, PageResult, PriceRow } from '../store/types.js';
import type { Command, Deps } from './deps.js';
import { unknownCursor } from './lookups.js';

export async function putPrice(
  deps: Deps,
  companyId: string,
  type: string,
  input: { denomination: string; unit_amount: string | number },
): Promise<Command<PriceRow>> {
  const unit = parseUnitAmount(input.unit_amount);
  if (!unit.ok) fail(unit.reason, unit.message, unit.param);
  return async (tx) => {
    const row: PriceRow = {
      companyId,
      type,
      denomination: input.denomination,
      unitAmount: unit.value,
      updatedAtMs: deps.clock.now(),
    };
    await tx.upsertPrice(row);
    return row;
  };
}

export async function listPrices(deps: Deps, companyId: string, page: Page): Promise<PageResult<PriceRow>> {
  return (await deps.store.read((tx) => tx.listPrices(companyId, page))) ?? unknownCursor();
}
