// Guarantees: on SQLite and PostgreSQL, an account has at most one card, replaced by upsert and forgotten
// by delete, without touching another account's card.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDialect, seedCompanyAndAccount } from '../support/stores.js';
import { T0 } from './contract-support.js';

forEachDialect((store) => {
  describe('cards', () => {
    test('cards: one per account, replaced by upsert, forgotten by delete', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      const card = (accountId: string, companyId: string, pm: string, last4: string) => ({
        accountId,
        companyId,
        paymentMethodId: pm,
        brand: 'visa',
        last4,
        expMonth: 12,
        expYear: 2034,
        createdAtMs: T0,
      });
      await store.write((tx) => tx.cards.upsertCard(card(a.accountId, a.companyId, 'pm_1', '4242')));
      await store.write((tx) => tx.cards.upsertCard(card(b.accountId, b.companyId, 'pm_2', '4444')));
      await store.write((tx) => tx.cards.upsertCard(card(a.accountId, a.companyId, 'pm_3', '1881')));
      assert.deepEqual(
        await store.read((tx) => tx.cards.findCard(a.accountId)),
        card(a.accountId, a.companyId, 'pm_3', '1881'),
      );
      await store.write((tx) => tx.cards.deleteCard(a.accountId));
      await store.write((tx) => tx.cards.deleteCard(a.accountId));
      assert.equal(await store.read((tx) => tx.cards.findCard(a.accountId)), undefined);
      assert.deepEqual(
        await store.read((tx) => tx.cards.findCard(b.accountId)),
        card(b.accountId, b.companyId, 'pm_2', '4444'),
        'another account keeps its card',
      );
    });
  });
});
