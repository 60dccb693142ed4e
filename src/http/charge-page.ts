/**
 * The small pages a customer's browser sees about a payment that waited for them: the sandbox's authorize page
 * (routes/sandbox.ts) and Stripe's way back (routes/stripe.ts). Plain HTML with an inline stylesheet, no script,
 * every value escaped, the receipt's CSP; no Referer leaves them (Stripe's return URL carries the PaymentIntent's
 * client secret in its query).
 */
import type { FastifyReply } from 'fastify';
import type { WaitingNote } from '../operations/charge-actions.js';
import type { ChargeRow } from '../store/types.js';
import { escapeHtml, formatUsd, PRINT_PAGE_CSP } from './receipt-page.js';

const STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; color: #111; background: #f6f6f4; margin: 0; }
main { max-width: 28rem; margin: 3rem auto; padding: 2rem; background: #fff; border: 1px solid #ddd; }
h1 { font-size: 1.3rem; margin: 0 0 1rem; }
form { display: inline-block; margin: 1rem 1rem 0 0; }
button { font: inherit; padding: .5rem 1.25rem; border-radius: 4px; border: 1px solid #333; cursor: pointer; }
.approve { background: #14532d; color: #fff; border-color: #14532d; }
.muted { color: #555; }
`;

export function chargePage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body>
</html>
`;
}

export function sendChargePage(reply: FastifyReply, html: string, status = 200) {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', PRINT_PAGE_CSP)
    .header('referrer-policy', 'no-referrer')
    .send(html);
}

/** A purchase made in the portal goes back where its session said (https or http://localhost, checked then). */
function backLink(c: ChargeRow): string {
  const back = typeof c.details.return_url === 'string' ? c.details.return_url : null;
  return back === null ? '' : `<p><a href="${escapeHtml(back)}">Return to where you bought it</a></p>`;
}

const amountOf = (c: ChargeRow) =>
  `<p class="muted">${escapeHtml(formatUsd(c.usdCents))} · ${escapeHtml(c.chargeId)}</p>`;

/** A charge no longer waiting for the customer: how it ended. */
export function chargeEndedPage(c: ChargeRow): string {
  const outcome = c.status === 'succeeded' ? 'was approved' : c.status === 'failed' ? 'was declined' : 'is not waiting';
  return chargePage('Payment', `<h1>This payment ${outcome}</h1>${amountOf(c)}${backLink(c)}`);
}

const WAITING: Record<WaitingNote | 'waiting', [string, string]> = {
  waiting: ['This payment still waits for you', 'Your bank asks you to confirm it. Nothing is charged until you do.'],
  processing: ['Your bank is processing this payment', 'It is settled within minutes: nothing more to do here.'],
  unavailable: [
    'This payment could not be checked just now',
    'Try again in a moment. A payment you confirmed is recorded in any case.',
  ],
  no_page: [
    'Your bank asks for a check this page cannot show',
    'The payment will be cancelled if it is not confirmed; nothing is charged.',
  ],
  no_card: ['There is no card to pay with', 'Add a card, then come back to confirm this payment.'],
};

/** A charge still waiting for the customer after they came to the engine's page: why, and the way on if any. */
export function chargeWaitingPage(c: ChargeRow, note?: WaitingNote): string {
  const [title, text] = WAITING[note ?? 'waiting'];
  const next =
    note === undefined && c.nextActionUrl !== null
      ? `<p><a href="${escapeHtml(c.nextActionUrl)}">Confirm the payment</a></p>`
      : '';
  return chargePage('Payment', `<h1>${title}</h1>${amountOf(c)}<p>${text}</p>${next}${backLink(c)}`);
}

/** The engine itself could not answer (its database): nothing was recorded, and the link may be followed again. */
export function paymentUnavailablePage(): string {
  const [title, text] = WAITING.unavailable;
  return chargePage('Payment', `<h1>${title}</h1><p>${text}</p>`);
}

/** No payment of this kind here: the same page whatever the reason (unknown, another processor's). */
export function noSuchPaymentPage(): string {
  return chargePage('Payment', '<h1>No such payment</h1><p class="muted">This link does not name a payment.</p>');
}
