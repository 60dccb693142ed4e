/**
 * A receipt as a page to print (`GET /v1/charges/{charge_id}/receipt` without `Accept: application/json`): plain
 * HTML with its own small stylesheet, no script, every value escaped. The JSON form is `presentReceipt`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { presentReceipt } from './schemas/charges.js';

type ReceiptJson = ReturnType<typeof presentReceipt>;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
const esc = escapeHtml;

/** A page of the server's own (a receipt, the sandbox's authorize page): no script, inline style, forms to itself. */
export const PRINT_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";

/** USD cents as dollars: 123456 → $1,234.56. */
export function formatUsd(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const dollars = Math.floor(abs / 100).toLocaleString('en-US');
  return `${sign}$${dollars}.${String(abs % 100).padStart(2, '0')}`;
}

const REASONS: Record<ReceiptJson['reason'], string> = {
  refill: 'Auto-refill',
  plan: 'Plan charge',
  overage: 'Overage',
  proration: 'Mid-month increase',
  topup: 'Credit pack',
};

const STYLE = `
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #111; margin: 0; background: #f6f6f4; }
main { max-width: 40rem; margin: 2rem auto; padding: 2rem; background: #fff; border: 1px solid #ddd; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
.muted { color: #555; }
table { width: 100%; border-collapse: collapse; margin: 1.5rem 0; }
th, td { text-align: left; padding: .5rem 0; border-bottom: 1px solid #e5e5e5; vertical-align: top; }
td.amount, th.amount { text-align: right; white-space: nowrap; }
tfoot td { font-weight: 600; border-bottom: none; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dt { color: #555; }
dd { margin: 0; overflow-wrap: anywhere; }
@media print { body { background: #fff; } main { border: none; margin: 0; max-width: none; } }
`;

export function receiptHtml(r: ReceiptJson): string {
  const who = [r.account.name, r.account.email].filter((x): x is string => x !== null);
  const item =
    r.grant === null
      ? REASONS[r.reason]
      : `${REASONS[r.reason]}: ${r.grant.amount.toLocaleString('en-US')} ${r.grant.denomination}` +
        (r.grant.expires_at === null ? '' : ` (expire ${r.grant.expires_at.slice(0, 10)})`);
  const total = formatUsd(r.usd_amount);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Receipt ${esc(r.receipt_number)} · ${esc(r.company.name)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Receipt ${esc(r.receipt_number)}</h1>
<p class="muted">${esc(r.company.name)} · paid ${esc(r.created_at.slice(0, 10))}</p>
<dl>
<dt>Billed to</dt><dd>${esc(who.length > 0 ? who.join(' · ') : r.account.account_id)}</dd>
<dt>Account</dt><dd>${esc(r.account.account_id)}</dd>
<dt>Charge</dt><dd>${esc(r.charge_id)}</dd>
<dt>Date</dt><dd>${esc(r.created_at)}</dd>
</dl>
<table>
<thead><tr><th>Description</th><th class="amount">Amount</th></tr></thead>
<tbody><tr><td>${esc(item)}</td><td class="amount">${esc(total)}</td></tr></tbody>
<tfoot><tr><td>Total paid (USD)</td><td class="amount">${esc(total)}</td></tr></tfoot>
</table>
</main>
</body>
</html>
`;
}

/** The receipt as JSON when asked for by name (and HTML is not), else the page to print (a browser, no Accept). */
export function sendReceipt(request: FastifyRequest, reply: FastifyReply, receipt: ReceiptJson) {
  const accept = request.headers.accept ?? '';
  if (accept.includes('application/json') && !accept.includes('text/html'))
    return reply.type('application/json; charset=utf-8').send({ data: receipt });
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', PRINT_PAGE_CSP)
    .send(receiptHtml(receipt));
}
