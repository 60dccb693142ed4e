/**
 * The sandbox processor's stand-in for a bank's 3-D Secure page (contract "Customer portal, top-ups and receipts"):
 * `/sandbox/authorize/{charge_id}` shows a charge waiting for the customer, with Approve and Decline as plain HTML
 * forms (urlencoded POSTs: no script needed). Only sandbox companies' charges; not part of the API document.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { answerSandboxAuthorization, sandboxChargeAwaitingCustomer } from '../../operations/charge-actions.js';
import type { ChargeRow } from '../../store/types.js';
import { fail } from '../../domain/outcome.js';
import { escapeHtml, formatUsd, PRINT_PAGE_CSP } from '../receipt-page.js';
import type { RouteContext } from '../route-context.js';

const STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; color: #111; background: #f6f6f4; margin: 0; }
main { max-width: 28rem; margin: 3rem auto; padding: 2rem; background: #fff; border: 1px solid #ddd; }
h1 { font-size: 1.3rem; margin: 0 0 1rem; }
form { display: inline-block; margin: 1rem 1rem 0 0; }
button { font: inherit; padding: .5rem 1.25rem; border-radius: 4px; border: 1px solid #333; cursor: pointer; }
.approve { background: #14532d; color: #fff; border-color: #14532d; }
.muted { color: #555; }
`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body>
</html>
`;
}

function authorizePage(c: ChargeRow): string {
  const amount = escapeHtml(formatUsd(c.usdCents));
  if (c.nextActionUrl === null || c.status === 'succeeded') {
    const outcome =
      c.status === 'succeeded' ? 'was approved' : c.status === 'failed' ? 'was declined' : 'is not waiting';
    // A purchase made in the portal goes back where its session said (https or http://localhost, checked then).
    const back = typeof c.details.return_url === 'string' ? c.details.return_url : null;
    return page(
      'Payment',
      `<h1>This payment ${outcome}</h1><p class="muted">${amount} · ${escapeHtml(c.chargeId)}</p>` +
        (back === null ? '' : `<p><a href="${escapeHtml(back)}">Return to where you bought it</a></p>`),
    );
  }
  const form = (decision: string, label: string, cls: string) =>
    `<form method="post" action="/sandbox/authorize/${encodeURIComponent(c.chargeId)}">` +
    `<input type="hidden" name="decision" value="${decision}"><button class="${cls}" type="submit">${label}</button>` +
    '</form>';
  return page(
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
    const send = (reply: FastifyReply, c: ChargeRow) =>
      reply.type('text/html; charset=utf-8').header('content-security-policy', PRINT_PAGE_CSP).send(authorizePage(c));

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
