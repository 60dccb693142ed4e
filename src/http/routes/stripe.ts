/**
 * The customer's browser and Stripe's 3-D Secure page (contract "Customer portal, top-ups and receipts": with Stripe,
 * payment intents confirmed on session, the customer brought back). Pages for a browser, not part of the API
 * document, no credentials: a charge id is all they take, and they act only on what Stripe says of its payment.
 *
 * - `GET /stripe/return?charge_id=…`: the `return_url` of the PaymentIntents the engine confirms on session; Stripe's
 *   page sends the browser here (adding `payment_intent`, its client secret and `redirect_status`, all ignored). The
 *   payment is read from Stripe and recorded if it ended (once), then a page says how it ended, with the way back to
 *   the portal session's `return_url` for a purchase.
 * - `GET /stripe/authenticate/{charge_id}`: the `next_action_url` of a charge that failed for want of the customer
 *   (or whose bank's check Stripe offered only to its client SDKs): confirms its PaymentIntent on session and
 *   redirects (303) to Stripe's page. A GET because it is a link in the portal; what it starts needs the cardholder.
 *
 * Unknown charges, another processor's, or one no longer waiting: a page, never an error of the API's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type CustomerVisit,
  isWaitingForCustomer,
  resumeAtProcessor,
  returnFromProcessor,
} from '../../operations/charge-actions.js';
import {
  chargeEndedPage,
  chargeWaitingPage,
  noSuchPaymentPage,
  paymentUnavailablePage,
  sendChargePage,
} from '../charge-page.js';
import type { RouteContext } from '../route-context.js';

/** Charge ids are short; anything longer names no charge (and is not looked up). */
const CHARGE_ID_MAX_CHARS = 256;

function chargeIdOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' && value.length <= CHARGE_ID_MAX_CHARS ? value : null;
}

function show(reply: FastifyReply, visit: CustomerVisit | undefined) {
  if (visit === undefined) return sendChargePage(reply, noSuchPaymentPage(), 404);
  if (visit.redirectUrl !== undefined) return reply.redirect(visit.redirectUrl, 303);
  const c = visit.charge;
  return sendChargePage(reply, isWaitingForCustomer(c) ? chargeWaitingPage(c, visit.note) : chargeEndedPage(c));
}

/** A failure of the engine's own (its database) is a page too: nothing was recorded, the link may be followed again. */
async function visit(request: FastifyRequest, reply: FastifyReply, act: () => Promise<CustomerVisit | undefined>) {
  try {
    return show(reply, await act());
  } catch (err) {
    request.log.error({ err }, 'a Stripe payment page failed');
    return sendChargePage(reply, paymentUnavailablePage(), 503);
  }
}

export function stripeRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  scope.get('/stripe/return', { schema: { hide: true } }, async (request, reply) => {
    const chargeId = chargeIdOf((request.query as Record<string, unknown> | undefined)?.charge_id);
    if (chargeId === null) return show(reply, undefined);
    return visit(request, reply, () => returnFromProcessor(deps, chargeId));
  });

  scope.get<{ Params: { charge_id: string } }>(
    '/stripe/authenticate/:charge_id',
    { schema: { hide: true } },
    async (request, reply) => {
      const chargeId = chargeIdOf(request.params.charge_id);
      if (chargeId === null) return show(reply, undefined);
      return visit(request, reply, () => resumeAtProcessor(deps, chargeId));
    },
  );
}
