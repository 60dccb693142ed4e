/**
 * Charges that wait for the customer (contract "Customer portal, top-ups and receipts": strong customer
 * authentication). A top-up charged with the customer present on a card that asks for 3-D Secure is left
 * `requires_action` with a `next_action_url`; a refill or plan charge made without the customer on such a card fails
 * with `authentication_required` and keeps a `next_action_url` too. The customer's answer there completes it (what
 * it was for is then applied, once: `recordChargeOutcome` under the charge's lock) or fails it for good. The
 * sandbox processor's stand-in for the bank's page is the engine's own `/sandbox/authorize/{charge_id}`.
 *
 * With Stripe the answer is given at Stripe's hosted page and kept there, on the PaymentIntent: the engine reads it
 * when the customer's browser comes back (`returnFromProcessor`), and a job reads it for a customer who never does
 * (`settleWaitingCharge`, charge-watch.ts). A top-up's `next_action_url` is Stripe's page itself; a charge that failed
 * for want of the customer links to the engine's `/stripe/authenticate/{charge_id}` (`resumeAtProcessor`), which
 * confirms its PaymentIntent on session (Stripe's way to finish an off-session payment that needs authentication)
 * and sends the customer on to Stripe's page. Nothing here trusts the browser: every outcome is Stripe's.
 */
import type { CustomerActions, PaymentState } from '../processors/types.js';
import type { ChargeRow } from '../store/types.js';
import { type ChargeAttempt, chargeLinks } from './charge-attempts.js';
import { nextCheckAt } from './charge-watch.js';
import { type ChargeOutcome, recordChargeOutcome } from './charges.js';
import type { Deps } from './deps.js';
import { processorFor } from './secrets.js';

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

/** A charge waiting for the customer: `requires_action`, or failed for want of them and still completable. */
export function isWaitingForCustomer(c: ChargeRow): boolean {
  return c.nextActionUrl !== null && c.status !== 'succeeded' && c.status !== 'pending';
}

/** Why a page about a charge still waiting says so: Stripe is settling it, could not be asked, or shows no page. */
export type WaitingNote = 'processing' | 'unavailable' | 'no_page' | 'no_card';

/** What the customer's browser is shown: the charge as it is now, why it still waits, or where to go next. */
export interface CustomerVisit {
  charge: ChargeRow;
  note?: WaitingNote;
  /** Stripe's hosted page, where the customer authenticates. */
  redirectUrl?: string;
}

type Ended = Extract<PaymentState, { status: 'succeeded' | 'failed' }>;
const hasEnded = (s: PaymentState): s is Ended => s.status === 'succeeded' || s.status === 'failed';

/** A charge of a company whose processor keeps its payments (Stripe), with its actions; undefined for any other. */
async function processorCharge(
  deps: Deps,
  chargeId: string,
): Promise<{ charge: ChargeRow; actions: CustomerActions; paymentMethodId: string | null } | undefined> {
  const found = await deps.store.read(async (tx) => {
    const charge = await tx.charges.findCharge(chargeId);
    if (charge === undefined) return undefined;
    const company = await tx.identity.findCompany(charge.companyId);
    return company && { charge, company, card: await tx.cards.findCard(charge.accountId) };
  });
  const actions = found && processorFor(deps, found.company).customerActions;
  if (!found || !actions) return undefined;
  return { charge: found.charge, actions, paymentMethodId: found.card?.paymentMethodId ?? null };
}

/**
 * Records the end of a payment as the processor has it (the customer's answer there), once. `abandoned`: the engine
 * gave it up (cancelled past its deadline), so the customer never authenticated.
 */
async function recordEnd(deps: Deps, charge: ChargeRow, state: Ended, abandoned: boolean): Promise<ChargeOutcome> {
  const message = 'the customer did not complete the authentication in time; the payment was cancelled';
  const attempt: ChargeAttempt =
    state.status === 'succeeded'
      ? { kind: 'succeeded', processorRef: charge.processorRef }
      : abandoned
        ? { kind: 'declined', code: 'authentication_required', message }
        : { kind: 'declined', code: state.code, message: state.message };
  return recordChargeOutcome(deps, charge.chargeId, attempt, { mayRetry: false, attempts: 1, customerAnswered: true });
}

async function ended(deps: Deps, charge: ChargeRow, state: Ended): Promise<CustomerVisit> {
  await recordEnd(deps, charge, state, false);
  return { charge: (await deps.store.read((tx) => tx.charges.findCharge(charge.chargeId)))! };
}

/**
 * The customer's browser back from Stripe's page (`/stripe/return?charge_id=…`, the PaymentIntent's `return_url`):
 * the payment is read from Stripe (never from the query, which anyone can write) and recorded if it ended; coming
 * back again finds the charge ended and asks Stripe nothing. Undefined: no such charge of a Stripe company.
 */
export async function returnFromProcessor(deps: Deps, chargeId: string): Promise<CustomerVisit | undefined> {
  const found = await processorCharge(deps, chargeId);
  if (!found) return undefined;
  const { charge } = found;
  if (!isWaitingForCustomer(charge) || charge.processorRef === null) return { charge };
  const state = await found.actions.paymentState({ chargeRef: charge.processorRef });
  if (!state.ok) return { charge, note: 'unavailable' };
  if (hasEnded(state.value)) return ended(deps, charge, state.value);
  return state.value.status === 'processing' ? { charge, note: 'processing' } : { charge };
}

/**
 * The customer follows the link of a charge waiting for them (`/stripe/authenticate/{charge_id}`): its PaymentIntent
 * is confirmed on session with the card on file and `return_url` (once per card: the idempotency key names it), and
 * the customer is sent to Stripe's page (`redirectUrl`). A payment that ended meanwhile is recorded instead.
 */
export async function resumeAtProcessor(deps: Deps, chargeId: string): Promise<CustomerVisit | undefined> {
  const found = await processorCharge(deps, chargeId);
  if (!found) return undefined;
  const { charge } = found;
  if (!isWaitingForCustomer(charge) || charge.processorRef === null) return { charge };
  if (found.paymentMethodId === null) return { charge, note: 'no_card' };
  const state = await found.actions.resumeWithCustomer({
    chargeRef: charge.processorRef,
    paymentMethodId: found.paymentMethodId,
    returnUrl: chargeLinks(deps, charge.chargeId).stripeReturn,
    idempotencyKey: charge.chargeId,
  });
  if (!state.ok) return { charge, note: 'unavailable' };
  const s = state.value;
  if (hasEnded(s)) return ended(deps, charge, s);
  if (s.status === 'waiting' && s.redirectUrl !== null) return { charge, redirectUrl: s.redirectUrl };
  // use_stripe_sdk (only Stripe's client SDKs show it) or still processing: the job settles it.
  return { charge, note: s.status === 'processing' ? 'processing' : 'no_page' };
}

/** The job's check of one watched charge (charge-watch.ts): its row, and when the customer's time is up. */
export interface WaitingCheck {
  outboxId: string;
  /** Checks of this row so far, this one included. */
  attempts: number;
  nowMs: number;
  deadlineMs: number;
}

/**
 * Reads a watched charge's payment at Stripe and records it once it ended (the customer authenticated and closed the
 * tab, failed, or let Stripe's authentication expire). Past the deadline a payment still waiting is cancelled first,
 * so that it cannot succeed after being recorded failed (Stripe refuses to cancel one that succeeded: it is recorded
 * so). Still open, or Stripe not reachable: `retryAtMs`. A failure is never recorded without Stripe's word for it.
 */
export async function settleWaitingCharge(
  deps: Deps,
  chargeId: string,
  check: WaitingCheck,
): Promise<{ completed: boolean } | { retryAtMs: number; message: string }> {
  const found = await processorCharge(deps, chargeId);
  const charge = found?.charge;
  // Ended meanwhile (the customer came back), or moved on (a new card collected it): nothing left to watch.
  if (!found || !charge || charge.outboxId !== check.outboxId || !isWaitingForCustomer(charge))
    return { completed: false };
  if (charge.processorRef === null) return { completed: false };
  const chargeRef = charge.processorRef;
  let state = await found.actions.paymentState({ chargeRef });
  const abandoned = check.nowMs >= check.deadlineMs && state.ok && state.value.status === 'waiting';
  if (abandoned) state = await found.actions.abandon({ chargeRef, idempotencyKey: charge.chargeId });
  if (state.ok && hasEnded(state.value)) {
    const recorded = await recordEnd(deps, charge, state.value, abandoned && state.value.status === 'failed');
    return { completed: recorded.outboxCompleted === true };
  }
  return {
    retryAtMs: nextCheckAt(check.nowMs, check.attempts, check.deadlineMs),
    message: state.ok ? `the payment is ${state.value.status}` : state.error.message,
  };
}
