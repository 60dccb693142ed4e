/**
 * Step 2 of the quickstart from CommonJS: `require('@billing-engine/client')` loads the package's CommonJS build
 * (dist/cjs), on every Node.js 20+, also those that cannot require() an ES module. An account and a balance of 1,000
 * tokens, the balance read back, and a refusal caught as a BillingError. CI runs it with plain `node` from the packed
 * tarball against a fresh server (sdk/typescript/scripts/ci-example.sh); it exits 1 with the reason when a figure
 * is not the one expected.
 *
 *   BILLING_URL=http://127.0.0.1:8080 BILLING_COMPANY_ID=c_… BILLING_API_KEY=sk_… node quickstart.cjs
 */
const assert = require('node:assert/strict');
const { Billing, BillingError } = require('@billing-engine/client');

async function main() {
  const billing = new Billing({
    baseUrl: process.env.BILLING_URL ?? 'http://127.0.0.1:8080',
    companyId: process.env.BILLING_COMPANY_ID ?? '',
    apiKey: process.env.BILLING_API_KEY ?? '',
  });

  const account = await billing.accounts.create({ name: 'Carol' });
  await billing.balances.create(account.account_id, 'tokens', { amount: 1000 });
  const balance = await billing.balances.retrieve(account.account_id, 'tokens');
  console.log(`account ${account.account_id}: amount ${balance.amount}, available ${balance.available}`);
  assert.deepEqual([balance.amount, balance.pending, balance.available], [1000, 0, 1000]);

  // A refusal is the CommonJS build's BillingError, the class this file required.
  try {
    await billing.balances.retrieve(account.account_id, 'credits');
    assert.fail('a balance that was never created is not found');
  } catch (err) {
    if (!(err instanceof BillingError)) throw err;
    console.log(`refused as expected: ${err.status} ${err.code} (${err.param})`);
    assert.equal(err.status, 404);
  }
  console.log('quickstart.cjs done');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
