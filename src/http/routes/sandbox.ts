/**
 * The sandbox processor's stand-in for a bank's 3-D Secure page (contract "Customer portal, top-ups and receipts"):
 * `/sandbox/authorize/{charge_id}` shows a charge waiting for the customer, with Approve and Decline as plain HTML
 * forms (urlencoded POSTs: no script needed). Only sandbox companies' charges; not part of the API document.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { answerSandboxAuthorization, sandboxChargeAwaitingCustomer } from '../../operations/charge-actions.js';
import type { ChargeRow } from '../../store/types.js';
import { fail } from '../../domain/outcome.js';
import { chargeEndedPage, chargePage, sendChargePage } from '../charge-page.js';
import { escapeHtml, formatUsd } from '../receipt-page.js';
import type { RouteContext } from '../route-context.js';

function authorizePage(c: ChargeRow): string {
  if (c.nextActionUrl === null || c.status === 'succeeded') return chargeEndedPage(c);
  const amount = escapeHtml(formatUsd(c.usdCents));
  const form = (decision: string, label: string, cls: string) =>
    `<form method="post" action="/sandbox/authorize/${encodeURIComponent(c.chargeId)}">` +
    `<input type="hidden" name="decision" value="${decision}"><button class="${cls}" type="submit">${label}</button>` +
    '</form>';
  return chargePage(
    'Confirm your payment',
    `<h1>Confirm your payment of ${amount}</h1>` +
      '<p class="muted">Sandbox: this page stands in for your bank’s 3-D Secure check.</p>' +
      form('approve', 'Approve', 'approve') +
      form('decline', 'Decline', 'decline'),
  );
}

export function sandboxRoutes(scope: FastifyInstance, { deps }: RouteContext): void {
  void scope.register(async (app) => {
    // Only these routes take a form's urlencoded body (the standard URLSearchParams parses it).
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    const found = async (chargeId: string) =>
      (await sandboxChargeAwaitingCustomer(deps, chargeId)) ?? fail('not_found', 'no such charge', 'charge_id');
    const send = (reply: FastifyReply, c: ChargeRow) => sendChargePage(reply, authorizePage(c));

    app.get<{ Params: { charge_id: string } }>(
      '/sandbox/authorize/:charge_id',
      { schema: { hide: true } },
      async (request, reply) => {
        return send(reply, await found(request.params.charge_id));
      },
    );

    app.post<{ Params: { charge_id: string }; Body: { decision?: string } }>(
      '/sandbox/authorize/:charge_id',
      { schema: { hide: true }, config: { idempotency: false } },
      async (request, reply) => {
        const decision = request.body?.decision;
        if (decision !== 'approve' && decision !== 'decline')
          fail('authorization_decision_unknown', 'decision must be approve or decline', 'decision');
        const charge = await found(request.params.charge_id);
        return send(reply, await answerSandboxAuthorization(deps, charge, decision === 'approve'));
      },
    );
  });
}
