/**
 * The account page's balances: amount, pending and available of each, its spend today and this month against its
 * limits (spend.tsx), and its auto-refill in words.
 */
import type { Account, Balance } from '../../api';
import { cents, date, units, when } from '../../format';
import { Empty } from '../../ui';
import { Spend } from './spend';

export function Balances({ account }: { account: Account }) {
  if (account.balances.length === 0)
    return <Empty title="No balances yet">Create one with the form below (for example “tokens” or “usd”).</Empty>;
  return (
    <ul class="balances" aria-label="Balances">
      {account.balances.map((b) => (
        <li key={b.denomination} class="balance" data-denomination={b.denomination}>
          <h2>{b.denomination}</h2>
          <dl>
            <dt>Amount</dt>
            <dd data-field="amount">{units(b.amount)}</dd>
            <dt>Pending</dt>
            <dd data-field="pending">{units(b.pending)}</dd>
            <dt>Available</dt>
            <dd data-field="available" class={b.available < 0 ? 'negative' : ''}>
              {units(b.available)}
            </dd>
          </dl>
          <Spend balance={b} />
          {b.next_expiry && (
            <p class="small" data-field="next-expiry">
              {units(b.next_expiry.amount)} expire on {date(b.next_expiry.expires_at)}
            </p>
          )}
          <p class="small">{refillText(b)}</p>
        </li>
      ))}
    </ul>
  );
}

function refillText(b: Balance): string {
  const parts: string[] = [];
  if (b.refill_threshold !== null)
    parts.push(
      `Refills ${units(b.refill_amount)} for ${cents(b.refill_usd_amount)} below ${units(b.refill_threshold)}`,
    );
  if (b.refill_monthly) parts.push(`monthly ${units(b.refill_amount)}, next ${when(b.next_refill_at)}`);
  if (b.auto_refill_paused) parts.push('auto-refill PAUSED after declined charges: attach a new card');
  return parts.length ? `${parts.join('; ')}.` : 'No auto-refill.';
}
