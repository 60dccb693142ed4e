/**
 * Charges that wait for the customer (contract "Customer portal, top-ups and receipts": strong customer
 * authentication). A top-up charged with the customer present on a card that asks for 3-D Secure is left
 * `requires_action` with a `next_action_url`; a refill or plan charge made without the customer on such a card fails
 * with `authentication_required` and keeps a `next_action_url` too. The customer's answer there completes it (what
 * it was for is then applied, once: `recordChargeOutcome` under the charge's lock) or fails it for good. The
 * sandbox processor's stand-in for the bank's page is the engine's own `/sandbox/authorize/{charge_id}`.
 */
import type { ChargeRow } from '../store/types.js';
import { recordChargeOutcome } from './charges.js';
import type { Deps } from './deps.js';

/** A sandbox charge waiting for the customer, to show on its authorize page; undefined for any other charge. */
export async function sandboxChargeAwaitingCustomer(deps: Deps, chargeId: string): Promise<ChargeRow | undefined> {
  return deps.store.read(async (tx) => {
    const charge = await tx.charges.findCharge(chargeId);
    if (charge === undefined) return undefined;
    const company = await tx.identity.findCompany(charge.companyId);
    return company?.processor === 'sandbox' ? charge : undefined;
  });
}

/**
 * The customer's answer on the sandbox's authorize page: approved completes the charge, declined fails it. A
 * charge that no longer waits (answered before, in another tab) is left as it is. Answers the charge as it ends.
 */
export async function answerSandboxAuthorization(deps: Deps, charge: ChargeRow, approved: boolean): Promise<ChargeRow> {
  if (charge.nextActionUrl !== null && charge.status !== 'succeeded')
    await recordChargeOutcome(
      deps,
      charge.chargeId,
      approved
        ? { kind: 'succeeded', processorRef: charge.processorRef }
        : { kind: 'declined', code: 'authentication_failed', message: 'the customer did not authenticate' },
      { mayRetry: false, attempts: 1, customerAnswered: true },
    );
  return (await deps.store.read((tx) => tx.charges.findCharge(charge.chargeId)))!;
}
