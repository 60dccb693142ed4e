// Guarantee: the webhook subscriptions a transaction finds for a company (what the notifications of a balance change
// are written to) are its live ones — deleted and disabled ones left out, each with its type and threshold — also
// after the transaction has locked the company's balances (PostgreSQL reads them with the lock), and a subscription
// created or deleted later in the same transaction is seen as it then is; on both databases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/lib/ids.js';
import { createBalance } from '../../src/operations/balances.js';
import type { Tx, WebhookSubscriptionRow, WebhookTarget } from '../../src/store/types.js';
import { TestClock } from '../../src/lib/clock.js';
import { ledger, T0, testDeps } from './contract-support.js';
import { forEachDialect, seedCompanyAndAccount } from '../support/stores.js';

forEachDialect((store) => {
  const deps = testDeps(store, new TestClock(T0));

  function subscription(companyId: string, over: Partial<WebhookSubscriptionRow>): WebhookSubscriptionRow {
    return {
      webhookId: newId('wh'),
      companyId,
      type: 'balance_change',
      url: 'https://example.com/hook',
      threshold: null,
      secret: 'whsec_AAAA',
      createdAtMs: T0,
      deletedAtMs: null,
      disabledAtMs: null,
      disabledReason: null,
      ...over,
    };
  }
  const sorted = (ts: WebhookTarget[]) => [...ts].sort((a, b) => (a.webhookId < b.webhookId ? -1 : 1));
  const targetOf = (w: WebhookSubscriptionRow): WebhookTarget => ({
    webhookId: w.webhookId,
    companyId: w.companyId,
    type: w.type,
    threshold: w.threshold,
  });

  test('live subscriptions, before and after the balances are locked, as the transaction changes them', async () => {
    const a = await seedCompanyAndAccount(store);
    const b = await seedCompanyAndAccount(store);
    await store.write(await createBalance(deps, a.companyId, a.accountId, 'tokens', 100));
    await store.write(await createBalance(deps, b.companyId, b.accountId, 'tokens', 100));
    const change = subscription(a.companyId, {});
    const threshold = subscription(a.companyId, { type: 'threshold', threshold: 2 ** 40 + 7 });
    const deleted = subscription(a.companyId, { deletedAtMs: T0 });
    const disabled = subscription(a.companyId, { disabledAtMs: T0, disabledReason: 'failing' });
    const other = subscription(b.companyId, { type: 'negative_balance' });
    await store.write(async (tx) => {
      for (const w of [change, threshold, deleted, disabled, other]) await tx.webhooks.insertWebhookSubscription(w);
    });
    const live = sorted([change, threshold].map(targetOf));
    const read = await store.read((tx) => tx.webhooks.findWebhookTargets([a.companyId]));
    assert.deepEqual(sorted(read), live, 'read outside a write');

    const later = subscription(a.companyId, { type: 'negative_balance' });
    const seen = await store.write(async (tx: Tx) => {
      await ledger.open(
        tx,
        [
          { accountId: a.accountId, denomination: 'tokens' },
          { accountId: b.accountId, denomination: 'tokens' },
        ],
        T0,
      );
      const locked = await tx.webhooks.findWebhookTargets([a.companyId, b.companyId, a.companyId]);
      await tx.webhooks.insertWebhookSubscription(later);
      const created = await tx.webhooks.findWebhookTargets([a.companyId]);
      await tx.webhooks.deleteWebhookSubscription(a.companyId, change.webhookId, T0);
      const afterDelete = await tx.webhooks.findWebhookTargets([a.companyId]);
      return { locked, created, afterDelete };
    });
    assert.deepEqual(sorted(seen.locked), sorted([...live, targetOf(other)]), 'after the lock: both companies, once');
    assert.deepEqual(sorted(seen.created), sorted([...live, targetOf(later)]), 'one created in the transaction');
    assert.deepEqual(
      sorted(seen.afterDelete),
      sorted([threshold, later].map(targetOf)),
      'one deleted in the transaction',
    );
  });
});
