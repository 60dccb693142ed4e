/**
 * The main README's five-minute quickstart, with the client: an account and a balance of 1,000 tokens, a price,
 * three events (one pending), the balance read back, the pending event settled, the transactions and this month's
 * usage listed, and a refusal handled by its code. CI runs it from the packed tarball against a fresh server
 * (sdk/typescript/scripts/ci-example.sh); it exits 1 with the reason when a figure is not the quickstart's.
 *
 *   BILLING_URL=http://127.0.0.1:8080 BILLING_COMPANY_ID=c_… BILLING_API_KEY=sk_… npx tsx quickstart.ts
 *
 * The company and its key come from step 1 of the quickstart (sign up, then POST /v1/companies), or the console.
 */
import assert from 'node:assert/strict';
import { Billing, BillingError } from '@billing-engine/client';

const billing = new Billing({
  baseUrl: process.env.BILLING_URL ?? 'http://127.0.0.1:8080',
  companyId: process.env.BILLING_COMPANY_ID ?? '',
  apiKey: process.env.BILLING_API_KEY ?? '',
});

// 2. An account for one of your users, and a balance of 1,000 tokens.
const account = await billing.accounts.create({ name: 'Bob' });
await billing.balances.create(account.account_id, 'tokens', { amount: 1000 });
console.log(`account ${account.account_id} with 1000 tokens`);

// 3. Price an event type (an exact decimal), then send events: complete, and pending (held).
await billing.prices.set('llm_call', { denomination: 'tokens', unit_amount: '0.5' });
const jobId = `job-7-${account.account_id}`; // client ids are unique per company: one per run of this script
const sent = await billing.events.ingest(account.account_id, [
  { type: 'llm_call', quantity: 41 },
  { type: 'export', cost_override: { amount: 10, denomination: 'tokens' } },
  { id: jobId, type: 'gpu', state: 'pending', cost_override: { amount: 100, denomination: 'tokens' } },
]);
console.log(`events_submitted ${sent.events_submitted}: ${sent.event_ids.join(', ')}`);

// 4. The balance: 41 × 0.5 = 20.5 is rounded up to 21, so amount 969; 100 held.
const balance = await billing.balances.retrieve(account.account_id, 'tokens');
console.log(`balance amount ${balance.amount}, pending ${balance.pending}, available ${balance.available}`);
assert.deepEqual([balance.amount, balance.pending, balance.available], [969, 100, 869]);

// 5. Settle the pending event at its final cost, and list the transactions (newest first, every page).
const settled = await billing.events.settle(jobId, {
  state: 'complete',
  cost_override: { amount: 80, denomination: 'tokens' },
});
console.log(`${settled.event_id} ${settled.state} at ${settled.cost.amount} ${settled.cost.denomination}`);
const kinds: string[] = [];
for await (const tx of billing.transactions.list(account.account_id, { limit: 2 })) {
  console.log(`  ${tx.kind.padEnd(8)} ${String(tx.amount).padStart(6)} → ${tx.balance_after}`);
  kinds.push(`${tx.kind} ${tx.amount}`);
}
assert.deepEqual(kinds, ['usage -80', 'usage -10', 'usage -21', 'grant 1000']);

// Usage read back: this month, by event type.
const now = new Date();
const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
const usage = await billing.usage.query({ account_id: account.account_id, from, to, window: 'month' });
for (const g of usage.data)
  console.log(`usage ${g.type}: ${g.events} event(s), quantity ${g.quantity}, cost ${g.cost}`);
assert.deepEqual(
  usage.data.map((g) => [g.type, g.cost]),
  [
    ['export', 10],
    ['gpu', 80],
    ['llm_call', 21],
  ],
);

// A refusal is a BillingError: its `code` says why.
try {
  await billing.events.ingest(account.account_id, [{ type: 'unpriced_type' }]);
  assert.fail('an event type without a price is refused');
} catch (err) {
  if (!(err instanceof BillingError)) throw err;
  console.log(`refused as expected: ${err.status} ${err.code} (${err.param}): ${err.message}`);
  assert.equal(err.code, 'no_price_for_event_type');
}
console.log('quickstart done');
