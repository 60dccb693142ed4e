/** Receipts: what a succeeded charge's receipt says, read for the company's API and for the portal. */
import { fail } from '../domain/outcome.js';
import type { AccountRow, ChargeRow, CompanyRow, GrantRow } from '../store/types.js';
import type { Deps } from './deps.js';

/** What a succeeded charge's receipt says: the charge, who was paid and by whom, and the grant it added. */
export interface Receipt {
  charge: ChargeRow & { receiptNumber: number; receiptAtMs: number };
  company: CompanyRow;
  account: AccountRow;
  grant: GrantRow | null;
}

/**
 * The receipt of a company's succeeded charge (of `accountId`'s, when given: the portal's); 404 `charge_id` for
 * another's charge or one that has not succeeded.
 */
export async function getReceipt(
  deps: Deps,
  companyId: string,
  chargeId: string,
  accountId?: string,
): Promise<Receipt> {
  return deps.store.read(async (tx) => {
    const charge = await tx.charges.findCharge(chargeId);
    if (charge?.companyId !== companyId || (accountId !== undefined && charge.accountId !== accountId))
      fail('not_found', `no such charge: ${chargeId}`, 'charge_id');
    if (charge.receiptNumber === null || charge.receiptAtMs === null)
      fail('not_found', `charge ${chargeId} has no receipt: it has not succeeded`, 'charge_id');
    const [company, account, grant] = await Promise.all([
      tx.identity.findCompany(companyId),
      tx.accounts.findAccount(companyId, charge.accountId),
      charge.grantId === null ? undefined : tx.grants.findGrant(companyId, charge.grantId),
    ]);
    if (!company || !account) throw new Error(`charge ${chargeId}: its company or account is gone`);
    return {
      charge: { ...charge, receiptNumber: charge.receiptNumber, receiptAtMs: charge.receiptAtMs },
      company,
      account,
      grant: grant ?? null,
    };
  });
}
