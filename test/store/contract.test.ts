// Guarantees: SQLite and PostgreSQL honour one Store contract — every Tx/ReadTx method, all-or-nothing writes, reads of committed data only, an exact ledger under concurrent writers.
import { processorFactory } from '../../src/processors/index.js';
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeEvent, type EventInput, type IngestRequest, type NormalizedEvent } from '../../src/domain/events.js';
import { HOLD_DURATION_MS } from '../../src/domain/holds.js';
import { OutcomeError } from '../../src/domain/outcome.js';
import { newId } from '../../src/lib/ids.js';
import { TestClock } from '../../src/lib/clock.js';
import { IngestBatcher, ingestGroup, settleEvent } from '../../src/operations/events.js';
import { balanceEffects } from '../../src/operations/effects.js';
import { Ledger, lockBalanceMap } from '../../src/operations/ledger.js';
import { balanceKey } from '../../src/domain/events.js';
import { PostgresStore } from '../../src/store/postgres.js';
import type { AccountRow, EventRow, Store, TransactionRow } from '../../src/store/types.js';
import {
  DIALECTS,
  balanceRow,
  openTestStore,
  seedAccount,
  seedBalance,
  seedCompanyAndAccount,
  type TestStore,
} from '../support/stores.js';

const T0 = 1_700_000_000_000;
/** The server's ledger, with its balance effects (refill decisions, plan alerts, notifications). */
const ledger = new Ledger(balanceEffects());

function eventRow(companyId: string, accountId: string, over: Partial<EventRow> = {}): EventRow {
  return {
    eventId: newId('ev'),
    companyId,
    accountId,
    clientSupplied: false,
    type: 'api_call',
    quantity: 1,
    costAmount: 1,
    denomination: 'credits',
    metadata: null,
    state: 'complete',
    contentHash: null,
    createdAtMs: T0,
    updatedAtMs: T0,
    expiresAtMs: null,
    ...over,
  };
}

function txRow(
  accountId: string,
  denomination: string,
  amount: number,
  balanceAfter: number,
  over: Partial<TransactionRow> = {},
): TransactionRow {
  return {
    transactionId: newId('tx'),
    accountId,
    denomination,
    amount,
    balanceAfter,
    kind: 'adjustment',
    eventId: null,
    reason: null,
    createdAtMs: T0,
    ...over,
  };
}

function accountRow(companyId: string, over: Partial<AccountRow> = {}): AccountRow {
  return {
    accountId: newId('a'),
    companyId,
    name: null,
    email: null,
    metadata: null,
    processorId: null,
    planId: null,
    createdAtMs: T0,
    ...over,
  };
}

function norm(input: EventInput, index = 0): NormalizedEvent {
  const n = normalizeEvent(input, index);
  assert.ok(n.ok, 'test event must normalise');
  return n.value;
}

function request(companyId: string, accountId: string, events: EventInput[], gate = false): IngestRequest {
  return { companyId, accountId, events: events.map((e, i) => norm(e, i)), gate };
}

const sortStrings = (xs: string[]) => [...xs].sort();

/** Everything the ledger says about one balance, from committed data. */
async function balanceState(store: Store, accountId: string, denomination: string) {
  return store.read(async (tx) => {
    const b = await tx.findBalance(accountId, denomination);
    const txs: TransactionRow[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await tx.listTransactions(accountId, denomination, { limit: 100, startingAfter: cursor });
      assert.ok(page);
      txs.push(...page.rows);
      if (!page.hasMore) break;
      cursor = page.rows.at(-1)!.transactionId;
    }
    return { balance: b!, transactions: txs };
  });
}

for (const dialect of DIALECTS) {
  describe(dialect, () => {
    let t: TestStore;
    let store: Store;

    before(async () => {
      t = await openTestStore(dialect, { poolSize: 8 });
      store = t.store;
    });
    after(async () => {
      await t.cleanup();
    });

    test('store reports its dialect', () => {
      assert.equal(store.dialect, dialect);
    });

    describe('users, companies, members', () => {
      test('insertUser returns the row with its id; find by email and by id', async () => {
        const email = `${newId('a')}@example.test`;
        const inserted = await store.write((tx) =>
          tx.insertUser({
            name: 'Ada Lovelace',
            email,
            passwordHash: 'h1',
            dateOfBirth: null,
            emailVerified: false,
            createdAtMs: T0,
          }),
        );
        assert.equal(typeof inserted.id, 'number');
        assert.deepEqual(inserted, {
          id: inserted.id,
          name: 'Ada Lovelace',
          email,
          passwordHash: 'h1',
          dateOfBirth: null,
          emailVerified: false,
          createdAtMs: T0,
        });
        assert.deepEqual(await store.read((tx) => tx.findUserByEmail(email)), inserted);
        assert.deepEqual(await store.read((tx) => tx.findUserById(inserted.id)), inserted);
        assert.equal(await store.read((tx) => tx.findUserByEmail(`nobody-${email}`)), undefined);
        assert.equal(await store.read((tx) => tx.findUserById(inserted.id + 1_000_000)), undefined);
      });

      test('updateUser changes name and email', async () => {
        const email = `${newId('a')}@example.test`;
        const u = await store.write((tx) =>
          tx.insertUser({
            name: 'A',
            email,
            passwordHash: 'h',
            dateOfBirth: '1990-01-01',
            emailVerified: true,
            createdAtMs: T0,
          }),
        );
        const email2 = `new-${email}`;
        await store.write((tx) => tx.updateUser(u.id, { name: 'B', email: email2 }));
        const found = await store.read((tx) => tx.findUserById(u.id));
        assert.deepEqual(found, { ...u, name: 'B', email: email2 });
        assert.equal(found!.emailVerified, true);
        assert.equal(found!.dateOfBirth, '1990-01-01');
        assert.equal(await store.read((tx) => tx.findUserByEmail(email)), undefined);
      });

      test('a duplicate email makes the write reject, and nothing of that transaction is kept', async () => {
        const email = `${newId('a')}@example.test`;
        const other = `${newId('a')}@example.test`;
        await store.write((tx) =>
          tx.insertUser({
            name: 'First',
            email,
            passwordHash: 'h',
            dateOfBirth: null,
            emailVerified: false,
            createdAtMs: T0,
          }),
        );
        await assert.rejects(
          store.write(async (tx) => {
            await tx.insertUser({
              name: 'Other',
              email: other,
              passwordHash: 'h',
              dateOfBirth: null,
              emailVerified: false,
              createdAtMs: T0,
            });
            await tx.insertUser({
              name: 'Dup',
              email,
              passwordHash: 'h',
              dateOfBirth: null,
              emailVerified: false,
              createdAtMs: T0,
            });
          }),
        );
        assert.equal(await store.read((tx) => tx.findUserByEmail(other)), undefined);
        assert.equal((await store.read((tx) => tx.findUserByEmail(email)))!.name, 'First');
      });

      test('companies and membership', async () => {
        const s = await seedCompanyAndAccount(store);
        const c = await store.read((tx) => tx.findCompany(s.companyId));
        assert.deepEqual(c, {
          companyId: s.companyId,
          name: c!.name,
          ownerUserId: s.userId,
          processor: 'sandbox',
          processorApiKey: null,
          createdAtMs: T0,
        });
        assert.equal(await store.read((tx) => tx.isCompanyMember(s.companyId, s.userId)), true);

        const stranger = await store.write((tx) =>
          tx.insertUser({
            name: 'S',
            email: `${newId('a')}@example.test`,
            passwordHash: 'h',
            dateOfBirth: null,
            emailVerified: false,
            createdAtMs: T0,
          }),
        );
        assert.equal(await store.read((tx) => tx.isCompanyMember(s.companyId, stranger.id)), false);
        await store.write((tx) => tx.addCompanyMember(s.companyId, stranger.id, 'member'));
        assert.equal(await store.read((tx) => tx.isCompanyMember(s.companyId, stranger.id)), true);
        await assert.rejects(
          store.write((tx) => tx.addCompanyMember(s.companyId, stranger.id, 'member')),
          'a membership exists once',
        );

        const stripeId = newId('c');
        await store.write((tx) =>
          tx.insertCompany({
            companyId: stripeId,
            name: 'S Co',
            ownerUserId: stranger.id,
            processor: 'stripe',
            processorApiKey: 'rk_test_1',
            createdAtMs: T0 + 1,
          }),
        );
        assert.deepEqual(await store.read((tx) => tx.findCompany(stripeId)), {
          companyId: stripeId,
          name: 'S Co',
          ownerUserId: stranger.id,
          processor: 'stripe',
          processorApiKey: 'rk_test_1',
          createdAtMs: T0 + 1,
        });
        assert.equal(await store.read((tx) => tx.findCompany(newId('c'))), undefined);
        assert.equal(await store.read((tx) => tx.isCompanyMember(stripeId, s.userId)), false);
      });
    });

    describe('api keys', () => {
      test('find by digest, list per company, revoke once', async () => {
        const a = await seedCompanyAndAccount(store);
        const b = await seedCompanyAndAccount(store);
        const k1 = {
          keyId: newId('key'),
          companyId: a.companyId,
          digest: newId('key'),
          prefix: 'sk_1',
          createdAtMs: T0,
          revokedAtMs: null,
        };
        const k2 = {
          keyId: newId('key'),
          companyId: a.companyId,
          digest: newId('key'),
          prefix: 'sk_2',
          createdAtMs: T0 + 1,
          revokedAtMs: null,
        };
        const kb = {
          keyId: newId('key'),
          companyId: b.companyId,
          digest: newId('key'),
          prefix: 'sk_b',
          createdAtMs: T0,
          revokedAtMs: null,
        };
        await store.write(async (tx) => {
          await tx.insertApiKey(k2);
          await tx.insertApiKey(k1);
          await tx.insertApiKey(kb);
        });
        assert.deepEqual(await store.read((tx) => tx.findApiKeyByDigest(k1.digest)), k1);
        assert.equal(await store.read((tx) => tx.findApiKeyByDigest('0'.repeat(64))), undefined);
        assert.deepEqual(
          await store.read((tx) => tx.listApiKeys(a.companyId)),
          [k1, k2],
          'oldest first, only this company',
        );

        assert.equal(
          await store.write((tx) => tx.revokeApiKey(b.companyId, k1.keyId, T0 + 5)),
          false,
          'another company cannot revoke it',
        );
        assert.equal(await store.write((tx) => tx.revokeApiKey(a.companyId, k1.keyId, T0 + 5)), true);
        assert.equal(await store.write((tx) => tx.revokeApiKey(a.companyId, k1.keyId, T0 + 6)), false, 'second revoke');
        assert.equal(
          await store.write((tx) => tx.revokeApiKey(a.companyId, newId('key'), T0 + 6)),
          false,
          'unknown key',
        );
        assert.equal(
          (await store.read((tx) => tx.findApiKeyByDigest(k1.digest)))!.revokedAtMs,
          T0 + 5,
          'first revocation time kept',
        );
        assert.equal((await store.read((tx) => tx.findApiKeyByDigest(k2.digest)))!.revokedAtMs, null);
      });

      test('a digest is unique', async () => {
        const a = await seedCompanyAndAccount(store);
        const digest = newId('key');
        await store.write((tx) =>
          tx.insertApiKey({
            keyId: newId('key'),
            companyId: a.companyId,
            digest,
            prefix: 'p',
            createdAtMs: T0,
            revokedAtMs: null,
          }),
        );
        await assert.rejects(
          store.write((tx) =>
            tx.insertApiKey({
              keyId: newId('key'),
              companyId: a.companyId,
              digest,
              prefix: 'p',
              createdAtMs: T0,
              revokedAtMs: null,
            }),
          ),
        );
        assert.equal((await store.read((tx) => tx.listApiKeys(a.companyId))).length, 1);
      });
    });

    describe('accounts', () => {
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
        await store.write((tx) => tx.upsertCard(card(a.accountId, a.companyId, 'pm_1', '4242')));
        await store.write((tx) => tx.upsertCard(card(b.accountId, b.companyId, 'pm_2', '4444')));
        await store.write((tx) => tx.upsertCard(card(a.accountId, a.companyId, 'pm_3', '1881')));
        assert.deepEqual(
          await store.read((tx) => tx.findCard(a.accountId)),
          card(a.accountId, a.companyId, 'pm_3', '1881'),
        );
        await store.write((tx) => tx.deleteCard(a.accountId));
        await store.write((tx) => tx.deleteCard(a.accountId));
        assert.equal(await store.read((tx) => tx.findCard(a.accountId)), undefined);
        assert.deepEqual(
          await store.read((tx) => tx.findCard(b.accountId)),
          card(b.accountId, b.companyId, 'pm_2', '4444'),
          'another account keeps its card',
        );
      });
      test('findAccount is scoped to the company; update; owners', async () => {
        const a = await seedCompanyAndAccount(store);
        const b = await seedCompanyAndAccount(store);
        const row = accountRow(a.companyId, {
          name: 'Acme',
          email: 'billing@acme.test',
          metadata: { tier: 'gold', n: 1, nested: { x: [1, 2] } },
          processorId: 'cus_1',
        });
        await store.write((tx) => tx.insertAccount(row));
        assert.deepEqual(await store.read((tx) => tx.findAccount(a.companyId, row.accountId)), row);
        assert.equal(
          await store.read((tx) => tx.findAccount(b.companyId, row.accountId)),
          undefined,
          'another company sees nothing',
        );
        assert.equal(await store.read((tx) => tx.findAccount(a.companyId, newId('a'))), undefined);

        const changed = { ...row, name: 'Acme 2', email: null, metadata: null, processorId: null, planId: 'p_x' };
        await store.write((tx) => tx.updateAccount(changed));
        assert.deepEqual(await store.read((tx) => tx.findAccount(a.companyId, row.accountId)), changed);
        await store.write((tx) => tx.updateAccount({ ...changed, companyId: b.companyId, name: 'hijack' }));
        assert.equal(
          (await store.read((tx) => tx.findAccount(a.companyId, row.accountId)))!.name,
          'Acme 2',
          'update is scoped to the company',
        );

        const owners = await store.read((tx) => tx.findAccountOwners([row.accountId, b.accountId, newId('a')]));
        assert.deepEqual(
          owners.sort((x, y) => x.accountId.localeCompare(y.accountId)),
          [
            { accountId: row.accountId, companyId: a.companyId },
            { accountId: b.accountId, companyId: b.companyId },
          ].sort((x, y) => x.accountId.localeCompare(y.accountId)),
        );
        assert.deepEqual(await store.read((tx) => tx.findAccountOwners([])), []);
      });

      test('an account id is unique', async () => {
        const a = await seedCompanyAndAccount(store);
        const b = await seedCompanyAndAccount(store);
        await assert.rejects(
          store.write((tx) => tx.insertAccount(accountRow(b.companyId, { accountId: a.accountId }))),
        );
        assert.equal(await store.read((tx) => tx.findAccount(b.companyId, a.accountId)), undefined);
      });

      test('listAccounts: keyset paging, newest first, has_more, unknown cursor', async () => {
        const a = await seedCompanyAndAccount(store);
        const b = await seedCompanyAndAccount(store);
        const ids = [a.accountId];
        for (let i = 0; i < 4; i++) ids.push(await seedAccount(store, a.companyId));
        const newestFirst = [...ids].reverse();

        const p1 = await store.read((tx) => tx.listAccounts(a.companyId, { limit: 2 }));
        assert.ok(p1);
        assert.deepEqual(
          p1.rows.map((r) => r.accountId),
          newestFirst.slice(0, 2),
        );
        assert.equal(p1.hasMore, true);
        const p2 = await store.read((tx) =>
          tx.listAccounts(a.companyId, { limit: 2, startingAfter: p1.rows[1]!.accountId }),
        );
        assert.ok(p2);
        assert.deepEqual(
          p2.rows.map((r) => r.accountId),
          newestFirst.slice(2, 4),
        );
        assert.equal(p2.hasMore, true);
        const p3 = await store.read((tx) =>
          tx.listAccounts(a.companyId, { limit: 2, startingAfter: p2.rows[1]!.accountId }),
        );
        assert.ok(p3);
        assert.deepEqual(
          p3.rows.map((r) => r.accountId),
          newestFirst.slice(4),
        );
        assert.equal(p3.hasMore, false);

        const exact = await store.read((tx) => tx.listAccounts(a.companyId, { limit: 5 }));
        assert.equal(exact!.rows.length, 5);
        assert.equal(exact!.hasMore, false, 'a page that ends exactly at the last row has no more');

        assert.equal(
          await store.read((tx) => tx.listAccounts(a.companyId, { limit: 2, startingAfter: newId('a') })),
          undefined,
          'unknown cursor',
        );
        assert.equal(
          await store.read((tx) => tx.listAccounts(a.companyId, { limit: 2, startingAfter: b.accountId })),
          undefined,
          "another company's account is no cursor",
        );
        const bList = await store.read((tx) => tx.listAccounts(b.companyId, { limit: 10 }));
        assert.deepEqual(
          bList!.rows.map((r) => r.accountId),
          [b.accountId],
        );
      });
    });

    describe('balances', () => {
      test('insertBalance creates a zero balance once; find and list', async () => {
        const a = await seedCompanyAndAccount(store);
        assert.equal(
          await store.write((tx) =>
            tx.insertBalance({
              ...balanceRow(a.companyId, a.accountId, 'credits'),
              refillThreshold: 10,
              refillAmount: 100,
              refillUsdAmount: 500,
              refillOnDay: '15',
            }),
          ),
          true,
        );
        assert.equal(
          await store.write((tx) => tx.insertBalance(balanceRow(a.companyId, a.accountId, 'credits'))),
          false,
          'duplicate',
        );
        assert.equal(
          await store.write((tx) => tx.insertBalance(balanceRow(a.companyId, a.accountId, 'Credits'))),
          true,
          'denominations are case-sensitive',
        );
        assert.equal(await store.write((tx) => tx.insertBalance(balanceRow(a.companyId, a.accountId, 'USD'))), true);
        const credits = await store.read((tx) => tx.findBalance(a.accountId, 'credits'));
        assert.ok(credits);
        assert.deepEqual(
          {
            accountId: credits.accountId,
            companyId: credits.companyId,
            denomination: credits.denomination,
            amount: credits.amount,
            pending: credits.pending,
            refillThreshold: credits.refillThreshold,
            refillAmount: credits.refillAmount,
            refillUsdAmount: credits.refillUsdAmount,
            refillOnDay: credits.refillOnDay,
            createdAtMs: credits.createdAtMs,
          },
          {
            accountId: a.accountId,
            companyId: a.companyId,
            denomination: 'credits',
            amount: 0,
            pending: 0,
            refillThreshold: 10,
            refillAmount: 100,
            refillUsdAmount: 500,
            refillOnDay: '15',
            createdAtMs: T0,
          },
        );
        assert.equal(credits.autoRefillPaused, false, 'a new balance is not paused');
        assert.equal(await store.read((tx) => tx.findBalance(a.accountId, 'nope')), undefined);
        const listed = await store.read((tx) => tx.listBalances(a.accountId));
        assert.deepEqual(
          listed.map((b) => b.denomination),
          ['Credits', 'USD', 'credits'].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)),
        );
        assert.deepEqual(await store.read((tx) => tx.listBalances(newId('a'))), []);
      });

      test('lockBalances returns only the keys that exist', async () => {
        const a = await seedCompanyAndAccount(store);
        await seedBalance(store, a.companyId, a.accountId, 'x', 5);
        await seedBalance(store, a.companyId, a.accountId, 'y', 7);
        const rows = await store.write((tx) =>
          tx.lockBalances([
            { accountId: a.accountId, denomination: 'y' },
            { accountId: a.accountId, denomination: 'missing' },
            { accountId: newId('a'), denomination: 'x' },
            { accountId: a.accountId, denomination: 'x' },
          ]),
        );
        assert.deepEqual(sortStrings(rows.map((r) => `${r.denomination}=${r.amount}`)), ['x=5', 'y=7']);
        assert.deepEqual(await store.write((tx) => tx.lockBalances([])), []);
      });

      test('applyBalanceDeltas: amount = amount + Δ and pending = pending + Δ, returning the new figures', async () => {
        const a = await seedCompanyAndAccount(store);
        await seedBalance(store, a.companyId, a.accountId, 'x', 100);
        await seedBalance(store, a.companyId, a.accountId, 'y', 0);
        const out = await store.write(async (tx) => {
          await tx.lockBalances([
            { accountId: a.accountId, denomination: 'x' },
            { accountId: a.accountId, denomination: 'y' },
          ]);
          return tx.applyBalanceDeltas([
            { accountId: a.accountId, denomination: 'x', amount: -30, pending: 5 },
            { accountId: a.accountId, denomination: 'y', amount: 12, pending: 0 },
            { accountId: a.accountId, denomination: 'missing', amount: 1, pending: 1 },
          ]);
        });
        assert.deepEqual(sortStrings(out.map((r) => `${r.denomination}:${r.amount}/${r.pending}`)), [
          'x:70/5',
          'y:12/0',
        ]);
        assert.deepEqual(await store.write((tx) => tx.applyBalanceDeltas([])), []);
        assert.equal(
          await store.read((tx) => tx.findBalance(a.accountId, 'missing')),
          undefined,
          'a delta never creates a balance',
        );
      });

      test('applyBalanceDeltas applies every delta it is given, even two for one balance', async () => {
        const a = await seedCompanyAndAccount(store);
        await seedBalance(store, a.companyId, a.accountId, 'x', 0);
        await store.write((tx) =>
          tx.applyBalanceDeltas([
            { accountId: a.accountId, denomination: 'x', amount: 3, pending: 1 },
            { accountId: a.accountId, denomination: 'x', amount: 4, pending: 2 },
          ]),
        );
        const b = await store.read((tx) => tx.findBalance(a.accountId, 'x'));
        assert.equal(b!.amount, 7);
        assert.equal(b!.pending, 3);
      });

      test('applyBalanceDeltas is atomic: concurrent unlocked increments lose nothing, and a failed write keeps none', async () => {
        const a = await seedCompanyAndAccount(store);
        await seedBalance(store, a.companyId, a.accountId, 'x', 0);
        await Promise.all(
          Array.from({ length: 40 }, () =>
            store.write((tx) =>
              tx.applyBalanceDeltas([{ accountId: a.accountId, denomination: 'x', amount: 1, pending: 2 }]),
            ),
          ),
        );
        let b = await store.read((tx) => tx.findBalance(a.accountId, 'x'));
        assert.equal(b!.amount, 40);
        assert.equal(b!.pending, 80);
        await assert.rejects(
          store.write(async (tx) => {
            await tx.applyBalanceDeltas([{ accountId: a.accountId, denomination: 'x', amount: 1000, pending: 0 }]);
            throw new Error('boom');
          }),
          /boom/,
        );
        b = await store.read((tx) => tx.findBalance(a.accountId, 'x'));
        assert.equal(b!.amount, 40);
      });

      test('amounts beyond 2^31 are exact', async () => {
        const a = await seedCompanyAndAccount(store);
        const big = Number.MAX_SAFE_INTEGER - 1;
        await seedBalance(store, a.companyId, a.accountId, 'x', big);
        const { balance, transactions } = await balanceState(store, a.accountId, 'x');
        assert.equal(balance.amount, big);
        assert.equal(transactions[0]!.balanceAfter, big);
      });
    });

    describe('prices', () => {
      test('upsertPrice replaces; findPrices; listPrices paging by type', async () => {
        const a = await seedCompanyAndAccount(store);
        const b = await seedCompanyAndAccount(store);
        await store.write(async (tx) => {
          for (const type of ['d', 'b', 'a', 'c', 'e'])
            await tx.upsertPrice({
              companyId: a.companyId,
              type,
              denomination: 'credits',
              unitAmount: '1',
              updatedAtMs: T0,
            });
          await tx.upsertPrice({
            companyId: b.companyId,
            type: 'a',
            denomination: 'other',
            unitAmount: '9',
            updatedAtMs: T0,
          });
        });
        await store.write((tx) =>
          tx.upsertPrice({
            companyId: a.companyId,
            type: 'c',
            denomination: 'USD',
            unitAmount: '0.0015',
            updatedAtMs: T0 + 9,
          }),
        );
        const found = await store.read((tx) => tx.findPrices(a.companyId, ['c', 'zz']));
        assert.deepEqual(found, [
          { companyId: a.companyId, type: 'c', denomination: 'USD', unitAmount: '0.0015', updatedAtMs: T0 + 9 },
        ]);
        assert.deepEqual(await store.read((tx) => tx.findPrices(a.companyId, [])), []);

        const p1 = await store.read((tx) => tx.listPrices(a.companyId, { limit: 2 }));
        assert.deepEqual(
          p1!.rows.map((p) => p.type),
          ['a', 'b'],
        );
        assert.equal(p1!.hasMore, true);
        assert.equal(p1!.rows[0]!.denomination, 'credits', "another company's price of the same type is not mixed in");
        const p2 = await store.read((tx) => tx.listPrices(a.companyId, { limit: 2, startingAfter: 'b' }));
        assert.deepEqual(
          p2!.rows.map((p) => p.type),
          ['c', 'd'],
        );
        assert.equal(p2!.hasMore, true);
        const p3 = await store.read((tx) => tx.listPrices(a.companyId, { limit: 2, startingAfter: 'd' }));
        assert.deepEqual(
          p3!.rows.map((p) => p.type),
          ['e'],
        );
        assert.equal(p3!.hasMore, false);
        assert.equal(
          await store.read((tx) => tx.listPrices(a.companyId, { limit: 2, startingAfter: 'nope' })),
          undefined,
        );
        const all = await store.read((tx) => tx.listPrices(a.companyId, { limit: 100 }));
        assert.equal(all!.rows.length, 5, 'upsert replaced rather than added');
      });
    });

    describe('events', () => {
      test('insertEvents, findEvent, findEventsByIds, lockEvents, updateEvents', async () => {
        const a = await seedCompanyAndAccount(store);
        const b = await seedCompanyAndAccount(store);
        const e1 = eventRow(a.companyId, a.accountId, {
          eventId: 'client-1',
          clientSupplied: true,
          quantity: 2.5,
          costAmount: 3,
          metadata: { k: 'v', n: [1, { z: null }] },
          contentHash: 'h1',
        });
        const e2 = eventRow(a.companyId, a.accountId, {
          state: 'pending',
          expiresAtMs: T0 + HOLD_DURATION_MS,
          costAmount: 9,
        });
        const e3 = eventRow(a.companyId, a.accountId, { state: 'cancelled', quantity: 0 });
        await store.write((tx) => tx.insertEvents([e1, e2, e3]));
        await store.write((tx) => tx.insertEvents([]));
        assert.deepEqual(await store.read((tx) => tx.findEvent(a.companyId, e1.eventId)), e1);
        assert.deepEqual(await store.read((tx) => tx.findEvent(a.companyId, e2.eventId)), e2);
        assert.deepEqual(await store.read((tx) => tx.findEvent(a.companyId, e3.eventId)), e3);
        assert.equal(
          await store.read((tx) => tx.findEvent(b.companyId, e1.eventId)),
          undefined,
          'scoped to the company',
        );

        const byIds = await store.read((tx) => tx.findEventsByIds(a.companyId, [e1.eventId, e3.eventId, 'unknown']));
        assert.deepEqual(sortStrings(byIds.map((e) => e.eventId)), sortStrings([e1.eventId, e3.eventId]));
        assert.deepEqual(await store.read((tx) => tx.findEventsByIds(b.companyId, [e1.eventId])), []);
        assert.deepEqual(await store.read((tx) => tx.findEventsByIds(a.companyId, [])), []);

        const locked = await store.write((tx) =>
          tx.lockEvents([
            { companyId: a.companyId, eventId: e2.eventId },
            { companyId: b.companyId, eventId: e1.eventId },
            { companyId: a.companyId, eventId: 'unknown' },
            { companyId: a.companyId, eventId: e1.eventId },
            { companyId: a.companyId, eventId: e2.eventId },
          ]),
        );
        assert.deepEqual(
          sortStrings(locked.map((e) => e.eventId)),
          sortStrings([e1.eventId, e2.eventId]),
          "only this company's events, each once, the missing ones absent",
        );
        assert.deepEqual(
          locked.find((e) => e.eventId === e2.eventId),
          e2,
        );
        assert.deepEqual(await store.write((tx) => tx.lockEvents([])), []);

        await store.write((tx) =>
          tx.updateEvents([
            { companyId: a.companyId, eventId: e2.eventId, state: 'complete', costAmount: 7, updatedAtMs: T0 + 5 },
          ]),
        );
        assert.deepEqual(await store.read((tx) => tx.findEvent(a.companyId, e2.eventId)), {
          ...e2,
          state: 'complete',
          costAmount: 7,
          updatedAtMs: T0 + 5,
          expiresAtMs: null,
        });
        await store.write((tx) =>
          tx.updateEvents([
            { companyId: b.companyId, eventId: e1.eventId, state: 'cancelled', costAmount: 0, updatedAtMs: T0 + 6 },
          ]),
        );
        assert.deepEqual(
          await store.read((tx) => tx.findEvent(a.companyId, e1.eventId)),
          e1,
          "another company's update touches nothing",
        );
      });

      test('awkward strings and numbers in a batch are stored and found exactly', async () => {
        // PostgreSQL receives a batch's columns as array literals: every character that means
        // something in that syntax, or in SQL, must come back as it was sent.
        const a = await seedCompanyAndAccount(store);
        const awkward = [
          'NULL',
          'null',
          '',
          ' ',
          ' padded ',
          'a,b',
          '{x}',
          '{"y":1}',
          'quo"te',
          'back\\slash',
          '\\"',
          'tab\tnew\nline',
          "it's",
          'ünïcødé ✓ 𝄞',
          '$1',
          '?',
          'a;b',
          '(1,2)',
        ];
        const rows = awkward.map((s, i) =>
          eventRow(a.companyId, a.accountId, {
            eventId: s === '' ? 'empty-id' : s,
            clientSupplied: true,
            type: s === '' ? 'empty-type' : s,
            contentHash: s,
            quantity: [0.1, 1e-7, 12_345.678, 2 ** 53 - 1, 0][i % 5]!,
            costAmount: [Number.MAX_SAFE_INTEGER, 0, 1, 7][i % 4]!,
            metadata: { s, nested: [s, { [s]: s }] },
          }),
        );
        await store.write((tx) => tx.insertEvents(rows));
        const found = await store.read((tx) =>
          tx.findEventsByIds(
            a.companyId,
            rows.map((r) => r.eventId),
          ),
        );
        assert.equal(found.length, rows.length);
        const byId = new Map(found.map((e) => [e.eventId, e]));
        for (const r of rows) assert.deepEqual(byId.get(r.eventId), r, JSON.stringify(r.eventId));
        assert.deepEqual(await store.read((tx) => tx.findEventsByIds(a.companyId, ['NULL', 'nul', '"NULL"'])), [
          found.find((e) => e.eventId === 'NULL'),
        ]);

        const entries = awkward.map((s, i) =>
          txRow(a.accountId, 'credits', -(i + 1), -(i + 1), { kind: 'usage', eventId: s, reason: s }),
        );
        await store.write((tx) => tx.insertTransactions(entries));
        const { transactions } = await balanceState(store, a.accountId, 'credits');
        assert.deepEqual(
          transactions.map((t) => [t.eventId, t.reason]).reverse(),
          awkward.map((s) => [s, s]),
        );
      });

      test('a batch round-trips whether each column is the same in every row, differs, or is partly NULL', async () => {
        // PostgreSQL sends a column that is the same in every row once, not once per row.
        const a = await seedCompanyAndAccount(store);
        const other = await seedAccount(store, a.companyId);
        const same = (i: number) =>
          eventRow(a.companyId, a.accountId, {
            eventId: `same-${i}`,
            type: 'NULL',
            quantity: 0.5,
            costAmount: 0,
            denomination: '',
            state: 'pending',
            contentHash: 'h',
            metadata: { k: 'v' },
            expiresAtMs: T0 + 1,
          });
        const varied = (i: number) =>
          eventRow(a.companyId, i % 2 === 0 ? a.accountId : other, {
            eventId: `varied-${i}`,
            clientSupplied: i % 2 === 0,
            type: `t${i}`,
            quantity: i,
            costAmount: i * 3,
            denomination: `d${i % 3}`,
            state: i % 2 === 0 ? 'pending' : 'complete',
            contentHash: i % 2 === 0 ? null : `h${i}`,
            metadata: i === 1 ? { i } : null,
            createdAtMs: T0 + i,
            updatedAtMs: T0 + 2 * i,
            expiresAtMs: i === 2 ? T0 : null,
          });
        for (const batch of [[0, 1, 2].map(same), [0, 1, 2, 3].map(varied), [same(9)]]) {
          await store.write((tx) => tx.insertEvents(batch));
          const found = await store.read((tx) =>
            tx.findEventsByIds(
              a.companyId,
              batch.map((e) => e.eventId),
            ),
          );
          assert.deepEqual(
            found.sort((p, q) => (p.eventId < q.eventId ? -1 : 1)),
            batch.sort((p, q) => (p.eventId < q.eventId ? -1 : 1)),
          );
        }
        const ledger = [
          txRow(a.accountId, 'L', 5, 5, { kind: 'grant', reason: 'NULL' }),
          txRow(a.accountId, 'L', 5, 10, { kind: 'grant', reason: 'NULL' }),
          txRow(a.accountId, 'L', -2, 8, { kind: 'usage', eventId: 'varied-1', createdAtMs: T0 + 9 }),
        ];
        await store.write((tx) => tx.insertTransactions(ledger));
        assert.deepEqual((await balanceState(store, a.accountId, 'L')).transactions.reverse(), ledger);
      });

      test('(company, event_id) is unique: a duplicate makes the write reject and nothing of it is kept', async () => {
        const a = await seedCompanyAndAccount(store);
        const b = await seedCompanyAndAccount(store);
        await seedBalance(store, a.companyId, a.accountId, 'credits', 100);
        await store.write((tx) => tx.insertEvents([eventRow(a.companyId, a.accountId, { eventId: 'same' })]));
        await store.write((tx) => tx.insertEvents([eventRow(b.companyId, b.accountId, { eventId: 'same' })]));

        const fresh = eventRow(a.companyId, a.accountId);
        await assert.rejects(
          store.write(async (tx) => {
            await tx.insertEvents([fresh]);
            await tx.applyBalanceDeltas([{ accountId: a.accountId, denomination: 'credits', amount: -1, pending: 0 }]);
            await tx.insertTransactions([txRow(a.accountId, 'credits', -1, 99)]);
            await tx.insertEvents([eventRow(a.companyId, a.accountId, { eventId: 'same' })]);
          }),
        );
        assert.equal(await store.read((tx) => tx.findEvent(a.companyId, fresh.eventId)), undefined);
        const { balance, transactions } = await balanceState(store, a.accountId, 'credits');
        assert.equal(balance.amount, 100);
        assert.equal(transactions.length, 1);

        await assert.rejects(
          store.write((tx) =>
            tx.insertEvents([
              eventRow(a.companyId, a.accountId, { eventId: 'twice' }),
              eventRow(a.companyId, a.accountId, { eventId: 'twice' }),
            ]),
          ),
          'a duplicate within one batch',
        );
        assert.equal(await store.read((tx) => tx.findEvent(a.companyId, 'twice')), undefined);
      });

      test('findExpiredHolds: only pending holds expired by now, oldest first, limit, `only` filter', async () => {
        const a = await seedCompanyAndAccount(store);
        const other = await seedAccount(store, a.companyId);
        // Expiry times far below any other test's, so the global query sees only these.
        const e = {
          old: eventRow(a.companyId, a.accountId, { state: 'pending', expiresAtMs: 1000 }),
          mid: eventRow(a.companyId, a.accountId, { state: 'pending', expiresAtMs: 2000, denomination: 'usd' }),
          atNow: eventRow(a.companyId, other, { state: 'pending', expiresAtMs: 3000 }),
          future: eventRow(a.companyId, a.accountId, { state: 'pending', expiresAtMs: 3001 }),
          done: eventRow(a.companyId, a.accountId, { state: 'complete', expiresAtMs: 500 }),
          cancelled: eventRow(a.companyId, other, { state: 'cancelled', expiresAtMs: 500 }),
        };
        await store.write((tx) => tx.insertEvents([e.future, e.atNow, e.done, e.mid, e.cancelled, e.old]));
        const ids = (rows: EventRow[]) => rows.map((r) => r.eventId);

        assert.deepEqual(ids(await store.read((tx) => tx.findExpiredHolds(3000, 100))), [
          e.old.eventId,
          e.mid.eventId,
          e.atNow.eventId,
        ]);
        assert.deepEqual(
          ids(await store.write((tx) => tx.findExpiredHolds(3000, 100))),
          [e.old.eventId, e.mid.eventId, e.atNow.eventId],
          'inside a write too',
        );
        assert.deepEqual(ids(await store.read((tx) => tx.findExpiredHolds(3000, 2))), [e.old.eventId, e.mid.eventId]);
        assert.deepEqual(ids(await store.read((tx) => tx.findExpiredHolds(999, 100))), []);
        assert.deepEqual(
          ids(
            await store.read((tx) =>
              tx.findExpiredHolds(3000, 100, [{ accountId: a.accountId, denomination: 'credits' }]),
            ),
          ),
          [e.old.eventId],
        );
        assert.deepEqual(
          sortStrings(
            ids(
              await store.read((tx) =>
                tx.findExpiredHolds(3000, 100, [
                  { accountId: other, denomination: 'credits' },
                  { accountId: a.accountId, denomination: 'usd' },
                ]),
              ),
            ),
          ),
          sortStrings([e.atNow.eventId, e.mid.eventId]),
        );
        assert.deepEqual(
          ids(
            await store.read((tx) =>
              tx.findExpiredHolds(3000, 1, [
                { accountId: other, denomination: 'credits' },
                { accountId: a.accountId, denomination: 'usd' },
              ]),
            ),
          ),
          [e.mid.eventId],
          'oldest first across the given balances, whatever their order',
        );
        assert.deepEqual(
          ids(
            await store.write((tx) =>
              tx.findExpiredHolds(3000, 100, [
                { accountId: other, denomination: 'credits' },
                { accountId: a.accountId, denomination: 'usd' },
              ]),
            ),
          ),
          [e.mid.eventId, e.atNow.eventId],
        );
        assert.deepEqual(await store.read((tx) => tx.findExpiredHolds(3000, 100, [])), []);

        await store.write((tx) =>
          tx.updateEvents([
            { companyId: a.companyId, eventId: e.old.eventId, state: 'cancelled', costAmount: 1, updatedAtMs: T0 },
          ]),
        );
        assert.deepEqual(
          ids(await store.read((tx) => tx.findExpiredHolds(3000, 100))),
          [e.mid.eventId, e.atNow.eventId],
          'a settled hold is no longer due',
        );
        await store.write((tx) =>
          tx.updateEvents(
            [e.mid, e.atNow].map((x) => ({
              companyId: a.companyId,
              eventId: x.eventId,
              state: 'cancelled' as const,
              costAmount: 1,
              updatedAtMs: T0,
            })),
          ),
        );
      });
    });

    describe('transactions and outbox', () => {
      test('listTransactions: newest first, denomination filter, paging, unknown cursor', async () => {
        const a = await seedCompanyAndAccount(store);
        const rows: TransactionRow[] = [];
        let x = 0;
        let y = 0;
        for (let i = 0; i < 7; i++) {
          const den = i % 3 === 2 ? 'y' : 'x';
          const amount = i + 1;
          if (den === 'x') x += amount;
          else y += amount;
          const after = den === 'x' ? x : y;
          rows.push(
            txRow(a.accountId, den, amount, after, {
              kind: i === 0 ? 'grant' : 'usage',
              eventId: i === 1 ? 'ev_1' : null,
              reason: i === 0 ? 'welcome' : null,
              createdAtMs: T0 + i,
            }),
          );
        }
        await store.write(async (tx) => {
          await tx.insertTransactions(rows.slice(0, 3));
          await tx.insertTransactions(rows.slice(3));
          await tx.insertTransactions([]);
        });
        const all = await store.read((tx) => tx.listTransactions(a.accountId, undefined, { limit: 100 }));
        assert.deepEqual(all!.rows, [...rows].reverse(), 'every field round-trips, newest first');
        assert.equal(all!.hasMore, false);

        const xs = rows.filter((r) => r.denomination === 'x').reverse();
        const p1 = await store.read((tx) => tx.listTransactions(a.accountId, 'x', { limit: 2 }));
        assert.deepEqual(
          p1!.rows.map((r) => r.transactionId),
          xs.slice(0, 2).map((r) => r.transactionId),
        );
        assert.equal(p1!.hasMore, true);
        const p2 = await store.read((tx) =>
          tx.listTransactions(a.accountId, 'x', { limit: 2, startingAfter: p1!.rows[1]!.transactionId }),
        );
        assert.deepEqual(
          p2!.rows.map((r) => r.transactionId),
          xs.slice(2, 4).map((r) => r.transactionId),
        );
        assert.equal(p2!.hasMore, true);
        const p3 = await store.read((tx) =>
          tx.listTransactions(a.accountId, 'x', { limit: 2, startingAfter: p2!.rows[1]!.transactionId }),
        );
        assert.deepEqual(
          p3!.rows.map((r) => r.transactionId),
          xs.slice(4).map((r) => r.transactionId),
        );
        assert.equal(p3!.hasMore, false);

        const ys = await store.read((tx) => tx.listTransactions(a.accountId, 'y', { limit: 10 }));
        assert.deepEqual(
          ys!.rows.map((r) => r.amount),
          [6, 3],
        );
        assert.equal(
          await store.read((tx) => tx.listTransactions(a.accountId, 'x', { limit: 2, startingAfter: 'tx_unknown' })),
          undefined,
        );
        assert.equal(
          await store.read((tx) =>
            tx.listTransactions(a.accountId, 'x', { limit: 2, startingAfter: ys!.rows[0]!.transactionId }),
          ),
          undefined,
          'a cursor outside the filtered list is unknown',
        );
        const other = await seedCompanyAndAccount(store);
        assert.equal(
          await store.read((tx) =>
            tx.listTransactions(other.accountId, undefined, { limit: 2, startingAfter: rows[0]!.transactionId }),
          ),
          undefined,
        );
        assert.deepEqual(await store.read((tx) => tx.listTransactions(other.accountId, undefined, { limit: 2 })), {
          rows: [],
          hasMore: false,
        });
      });

      test('writeLedger: events, summed balance deltas and ledger rows in one posting, all or nothing', async () => {
        const a = await seedCompanyAndAccount(store);
        await seedBalance(store, a.companyId, a.accountId, 'x', 100);
        await seedBalance(store, a.companyId, a.accountId, 'y', 50);
        const x0 = (await balanceState(store, a.accountId, 'x')).transactions.length;
        const events = [
          eventRow(a.companyId, a.accountId, { denomination: 'x', costAmount: 3 }),
          eventRow(a.companyId, a.accountId, {
            denomination: 'x',
            costAmount: 4,
            state: 'pending',
            expiresAtMs: T0 + 1,
          }),
        ];
        const rows = [
          txRow(a.accountId, 'x', -3, 97, { kind: 'usage', eventId: events[0]!.eventId }),
          txRow(a.accountId, 'y', 5, 55),
          txRow(a.accountId, 'x', -1, 96),
        ];
        const after = await store.write(async (tx) => {
          await tx.lockBalances([
            { accountId: a.accountId, denomination: 'x' },
            { accountId: a.accountId, denomination: 'y' },
          ]);
          // Two deltas of one balance: both count.
          return tx.writeLedger(
            events,
            [
              { accountId: a.accountId, denomination: 'x', amount: -3, pending: 4 },
              { accountId: a.accountId, denomination: 'y', amount: 5, pending: 0 },
              { accountId: a.accountId, denomination: 'x', amount: -1, pending: 0 },
            ],
            rows,
          );
        });
        const byDenomination = new Map(after.map((b) => [b.denomination, [b.amount, b.pending]]));
        assert.deepEqual(
          Object.fromEntries(byDenomination),
          { x: [96, 4], y: [55, 0] },
          'the balances after are returned, once each',
        );
        assert.deepEqual(
          await store
            .read((tx) =>
              tx.findEventsByIds(
                a.companyId,
                events.map((e) => e.eventId),
              ),
            )
            .then((r) => r.sort((p, q) => p.costAmount - q.costAmount)),
          events,
        );
        const x = await balanceState(store, a.accountId, 'x');
        assert.deepEqual(
          x.transactions.slice(0, x.transactions.length - x0).reverse(),
          [rows[0], rows[2]],
          'ledger rows in order',
        );
        assert.deepEqual(
          (await store.read((tx) => tx.auditLedger())).filter((v) => v.accountId === a.accountId),
          [],
        );

        // Only deltas, or nothing at all.
        assert.deepEqual(
          (
            await store.write((tx) =>
              tx.writeLedger([], [{ accountId: a.accountId, denomination: 'y', amount: 0, pending: 2 }], []),
            )
          ).map((b) => b.pending),
          [2],
        );
        assert.deepEqual(await store.write((tx) => tx.writeLedger([], [], [])), []);
        // A duplicate event id fails the whole posting: no delta, no row stays.
        await assert.rejects(
          store.write((tx) =>
            tx.writeLedger(
              [events[0]!],
              [{ accountId: a.accountId, denomination: 'y', amount: 9, pending: 0 }],
              [txRow(a.accountId, 'y', 9, 64)],
            ),
          ),
        );
        const y = await store.read((tx) => tx.findBalance(a.accountId, 'y'));
        assert.deepEqual([y!.amount, y!.pending], [55, 2]);
      });

      test('insertOutbox writes rows with the transaction, and only if it commits', async () => {
        const a = await seedCompanyAndAccount(store);
        const o1 = {
          outboxId: newId('ob'),
          companyId: a.companyId,
          topic: 'webhook.balance_change',
          payload: { amount: 5, nested: { a: [1] } },
          runAtMs: T0,
          createdAtMs: T0,
        };
        const o2 = { ...o1, outboxId: newId('ob'), topic: 'charge.refill', payload: {} };
        await store.write((tx) => tx.insertOutbox([o1, o2]));
        await store.write((tx) => tx.insertOutbox([]));
        await assert.rejects(
          store.write(async (tx) => {
            await tx.insertOutbox([{ ...o1, outboxId: newId('ob') }]);
            throw new Error('abort');
          }),
        );
        await assert.rejects(
          store.write((tx) => tx.insertOutbox([o1])),
          'outbox ids are unique',
        );
        const rows = await t.query(
          'SELECT outbox_id, topic, payload, run_at, done_at FROM outbox WHERE company_id = ? ORDER BY seq',
          [a.companyId],
        );
        assert.deepEqual(
          rows.map((r) => [r.outbox_id, r.topic, JSON.parse(String(r.payload)), Number(r.run_at), r.done_at]),
          [
            [o1.outboxId, o1.topic, o1.payload, T0, null],
            [o2.outboxId, o2.topic, {}, T0, null],
          ],
        );
      });
    });

    describe('idempotency keys', () => {
      test('claim, complete, release, deleteBefore', async () => {
        const scope = newId('c');
        const row = { scope, key: 'k1', requestHash: 'h', statusCode: null, responseBody: null, createdAtMs: 10 };
        assert.equal(await store.write((tx) => tx.claimIdempotency(row)), true);
        assert.equal(
          await store.write((tx) => tx.claimIdempotency({ ...row, requestHash: 'other' })),
          false,
          'claimed already',
        );
        assert.deepEqual(await store.read((tx) => tx.findIdempotency(scope, 'k1')), row);
        assert.equal(await store.read((tx) => tx.findIdempotency(newId('c'), 'k1')), undefined, 'scoped');

        await store.write((tx) => tx.releaseIdempotency(scope, 'k1'));
        assert.equal(
          await store.read((tx) => tx.findIdempotency(scope, 'k1')),
          undefined,
          'an in-progress claim is released',
        );
        assert.equal(await store.write((tx) => tx.claimIdempotency(row)), true, 'and can be claimed again');

        await store.write((tx) => tx.completeIdempotency(scope, 'k1', 201, '{"ok":true}'));
        assert.deepEqual(await store.read((tx) => tx.findIdempotency(scope, 'k1')), {
          ...row,
          statusCode: 201,
          responseBody: '{"ok":true}',
        });
        await store.write((tx) => tx.releaseIdempotency(scope, 'k1'));
        assert.equal(
          (await store.read((tx) => tx.findIdempotency(scope, 'k1')))!.statusCode,
          201,
          'a completed key is never released',
        );

        assert.equal(await store.write((tx) => tx.claimIdempotency({ ...row, key: 'k2', createdAtMs: 20 })), true);
        assert.equal(await store.write((tx) => tx.claimIdempotency({ ...row, key: 'k3', createdAtMs: 30 })), true);
        assert.equal(await store.write((tx) => tx.deleteIdempotencyBefore(20)), 1, 'strictly older only');
        assert.equal(await store.read((tx) => tx.findIdempotency(scope, 'k1')), undefined);
        assert.ok(await store.read((tx) => tx.findIdempotency(scope, 'k2')));
        assert.equal(await store.write((tx) => tx.deleteIdempotencyBefore(31)), 2);
        assert.equal(await store.write((tx) => tx.deleteIdempotencyBefore(31)), 0);
      });
    });

    describe('write and read', () => {
      test('write returns what fn returns; a throw rolls everything back and rethrows', async () => {
        assert.equal(await store.write(async () => 42), 42);
        const email = `${newId('a')}@example.test`;
        const companyId = newId('c');
        const err = new Error('deliberate');
        await assert.rejects(
          store.write(async (tx) => {
            const u = await tx.insertUser({
              name: 'R',
              email,
              passwordHash: 'h',
              dateOfBirth: null,
              emailVerified: false,
              createdAtMs: T0,
            });
            await tx.insertCompany({
              companyId,
              name: 'R',
              ownerUserId: u.id,
              processor: 'sandbox',
              processorApiKey: null,
              createdAtMs: T0,
            });
            await tx.upsertPrice({ companyId, type: 't', denomination: 'd', unitAmount: '1', updatedAtMs: T0 });
            assert.ok(await tx.findUserByEmail(email), 'a transaction sees its own writes');
            throw err;
          }),
          (e) => e === err,
        );
        assert.equal(await store.read((tx) => tx.findUserByEmail(email)), undefined);
        assert.equal(await store.read((tx) => tx.findCompany(companyId)), undefined);
        assert.deepEqual(await store.read((tx) => tx.findPrices(companyId, ['t'])), []);
        // The store is still usable after a rollback.
        const s = await seedCompanyAndAccount(store);
        assert.ok(await store.read((tx) => tx.findCompany(s.companyId)));
      });

      test('read sees only committed data', async () => {
        const email = `${newId('a')}@example.test`;
        let seenInside: unknown = 'not run';
        await store.write(async (tx) => {
          await tx.insertUser({
            name: 'C',
            email,
            passwordHash: 'h',
            dateOfBirth: null,
            emailVerified: false,
            createdAtMs: T0,
          });
          seenInside = await store.read((r) => r.findUserByEmail(email));
        });
        assert.equal(seenInside, undefined, 'an uncommitted row is invisible to read');
        assert.ok(await store.read((tx) => tx.findUserByEmail(email)), 'visible once committed');
      });

      test('sequential writes see each other', async () => {
        const a = await seedCompanyAndAccount(store);
        await seedBalance(store, a.companyId, a.accountId, 'x', 0);
        for (let i = 1; i <= 5; i++) {
          await store.write(async (tx) => {
            const locked = await lockBalanceMap(tx, [{ accountId: a.accountId, denomination: 'x' }]);
            await ledger
              .begin(tx, T0)
              .post(
                locked,
                [{ accountId: a.accountId, denomination: 'x', amount: i, kind: 'adjustment' }],
                new Map([[balanceKey(a.accountId, 'x'), { amount: i, pending: 0 }]]),
              );
          });
        }
        const { balance, transactions } = await balanceState(store, a.accountId, 'x');
        assert.equal(balance.amount, 15);
        assert.deepEqual(
          transactions.map((r) => r.balanceAfter),
          [15, 10, 6, 3, 1],
        );
      });
    });

    describe('auditLedger', () => {
      test('an exact ledger built by the operations has no violations', async () => {
        const a = await seedCompanyAndAccount(store);
        await seedBalance(store, a.companyId, a.accountId, 'credits', 1000);
        await seedBalance(store, a.companyId, a.accountId, 'usd', 50);
        await store.write((tx) =>
          tx.upsertPrice({
            companyId: a.companyId,
            type: 'call',
            denomination: 'credits',
            unitAmount: '0.5',
            updatedAtMs: T0,
          }),
        );
        const clock = new TestClock(T0);
        const deps = { store, clock, processors: processorFactory(), ledger, webhooks: { allowPrivate: false } };
        const out = await store.write((tx) =>
          ingestGroup(ledger.begin(tx, T0), [
            request(a.companyId, a.accountId, [
              { type: 'call', quantity: 3 },
              { type: 'x', cost_override: { amount: 7, denomination: 'usd' } },
            ]),
            request(a.companyId, a.accountId, [
              { type: 'call', id: 'p1', state: 'pending', quantity: 10 },
              { type: 'call', id: 'p2', state: 'pending' },
              { type: 'call', id: 'p3', state: 'pending' },
            ]),
          ]),
        );
        assert.ok(out.every((o) => o.ok));
        const settled = await settleEvent(deps, a.companyId, 'p1', {
          state: 'complete',
          cost_override: { amount: 4, denomination: 'credits' },
        });
        assert.equal(settled.state, 'complete');
        assert.equal(settled.costAmount, 4);
        await settleEvent(deps, a.companyId, 'p2', { state: 'cancelled' });
        assert.equal(
          (await settleEvent(deps, a.companyId, 'p2', { state: 'cancelled' })).state,
          'cancelled',
          'repeating the state is a no-op',
        );
        await assert.rejects(
          settleEvent(deps, a.companyId, 'p2', { state: 'complete' }),
          (e) => e instanceof OutcomeError && e.failure.reason === 'event_not_pending',
        );
        assert.equal((await store.read((tx) => tx.findBalance(a.accountId, 'credits')))!.pending, 1, 'p3 still held');
        clock.advanceTo(T0 + HOLD_DURATION_MS);
        await assert.rejects(
          settleEvent(deps, a.companyId, 'p3', { state: 'complete' }),
          (e) => e instanceof OutcomeError && e.failure.reason === 'event_not_pending',
          'an expired hold is cancelled, not completed',
        );

        const credits = await store.read((tx) => tx.findBalance(a.accountId, 'credits'));
        assert.deepEqual([credits!.amount, credits!.pending], [1000 - 2 - 4, 0]);
        assert.equal((await store.read((tx) => tx.findEvent(a.companyId, 'p3')))!.state, 'cancelled');
        assert.deepEqual(
          (await store.read((tx) => tx.auditLedger())).filter((v) => v.accountId === a.accountId),
          [],
        );
      });

      test('reports each kind of violation', async () => {
        // A store of its own: the corruption must not leak into the other tests' audits.
        const own = await openTestStore(dialect);
        try {
          const s = own.store;
          assert.deepEqual(await s.read((tx) => tx.auditLedger()), [], 'an empty ledger is exact');
          const a = await seedCompanyAndAccount(s);
          for (const d of ['good', 'sum', 'chain', 'held']) await seedBalance(s, a.companyId, a.accountId, d, 100);
          await s.write((tx) =>
            tx.insertEvents([
              eventRow(a.companyId, a.accountId, {
                denomination: 'good',
                state: 'pending',
                costAmount: 5,
                expiresAtMs: T0 + HOLD_DURATION_MS,
              }),
            ]),
          );
          await s.write((tx) =>
            tx.applyBalanceDeltas([{ accountId: a.accountId, denomination: 'good', amount: 0, pending: 5 }]),
          );
          assert.deepEqual(await s.read((tx) => tx.auditLedger()), [], 'a correct ledger with a hold is exact');

          // amount ≠ sum of transactions: a delta with no transaction.
          await s.write((tx) =>
            tx.applyBalanceDeltas([{ accountId: a.accountId, denomination: 'sum', amount: 3, pending: 0 }]),
          );
          // A broken balance_after chain: the sum still matches, the running figure does not.
          await s.write(async (tx) => {
            await tx.applyBalanceDeltas([{ accountId: a.accountId, denomination: 'chain', amount: 10, pending: 0 }]);
            await tx.insertTransactions([txRow(a.accountId, 'chain', 10, 999)]);
          });
          // pending ≠ held cost of pending events.
          await s.write((tx) =>
            tx.applyBalanceDeltas([{ accountId: a.accountId, denomination: 'held', amount: 0, pending: 7 }]),
          );
          // A transaction of a balance that does not exist.
          await s.write((tx) => tx.insertTransactions([txRow(a.accountId, 'ghost', 1, 1)]));

          const v = await s.read((tx) => tx.auditLedger());
          const by = (d: string) => v.filter((x) => x.denomination === d);
          assert.equal(by('good').length, 0);
          assert.equal(by('sum').length, 1);
          assert.match(by('sum')[0]!.problem, /amount 103 ≠ sum of transactions 100/);
          assert.equal(by('chain').length, 1);
          assert.match(by('chain')[0]!.problem, /100 \+ 10 ≠ balance_after 999/);
          assert.equal(by('held').length, 1);
          assert.match(by('held')[0]!.problem, /pending 7 ≠ held cost of pending events 0/);
          assert.equal(by('ghost').length, 1);
          assert.match(by('ghost')[0]!.problem, /without a balance/);
          assert.ok(v.every((x) => x.accountId === a.accountId));
          assert.equal(v.length, 4);
        } finally {
          await own.cleanup();
        }
      });
    });

    describe('concurrency', () => {
      test('200 concurrent writers on one balance: amount = sum, chain exact, audit clean', async () => {
        const a = await seedCompanyAndAccount(store);
        await seedBalance(store, a.companyId, a.accountId, 'hot', 1000);
        const key = balanceKey(a.accountId, 'hot');
        const pids = new Set<number>();
        const onAcquire = (c: unknown) => pids.add((c as { processID: number }).processID);
        if (store instanceof PostgresStore) store.pool.on('acquire', onAcquire);
        let inFlight = 0;
        let inFlightMax = 0;
        const amounts = Array.from({ length: 200 }, (_, i) => ((i * 7919) % 3 === 0 ? -1 : 1));
        try {
          await Promise.all(
            amounts.map((amount) =>
              store.write(async (tx) => {
                inFlight++;
                inFlightMax = Math.max(inFlightMax, inFlight);
                try {
                  const locked = await lockBalanceMap(tx, [{ accountId: a.accountId, denomination: 'hot' }]);
                  await ledger
                    .begin(tx, T0)
                    .post(
                      locked,
                      [{ accountId: a.accountId, denomination: 'hot', amount, kind: 'adjustment' }],
                      new Map([[key, { amount, pending: 0 }]]),
                    );
                } finally {
                  inFlight--;
                }
              }),
            ),
          );
        } finally {
          if (store instanceof PostgresStore) store.pool.removeListener('acquire', onAcquire);
        }
        const expected = 1000 + amounts.reduce((s, x) => s + x, 0);
        const { balance, transactions } = await balanceState(store, a.accountId, 'hot');
        assert.equal(balance.amount, expected);
        assert.equal(transactions.length, 201);
        assert.equal(transactions[0]!.balanceAfter, expected, 'the newest transaction carries the final amount');
        assert.deepEqual(
          (await store.read((tx) => tx.auditLedger())).filter((v) => v.accountId === a.accountId),
          [],
        );
        if (dialect === 'postgres') {
          assert.ok(pids.size >= 2, `writers ran on ${pids.size} connection(s)`);
          assert.ok(inFlightMax >= 2, `at most ${inFlightMax} transaction(s) were open at once`);
        } else {
          assert.equal(inFlightMax, 1, "SQLite's single writer never interleaves transactions");
        }
      });

      test('concurrent ingest groups on overlapping balances in opposite orders: no error, exact ledger', async () => {
        const s = await seedCompanyAndAccount(store);
        const acc2 = await seedAccount(store, s.companyId);
        await seedBalance(store, s.companyId, s.accountId, 'A', 100_000);
        await seedBalance(store, s.companyId, s.accountId, 'B', 100_000);
        await seedBalance(store, s.companyId, acc2, 'A', 100_000);
        await store.write((tx) =>
          tx.upsertPrice({
            companyId: s.companyId,
            type: 'a-call',
            denomination: 'A',
            unitAmount: '1.5',
            updatedAtMs: T0,
          }),
        );
        // Holds recorded at T0 have expired by the time the groups run: ingest cancels them concurrently.
        const early = await store.write((tx) =>
          ingestGroup(ledger.begin(tx, T0), [
            request(s.companyId, s.accountId, [
              { type: 'a-call', state: 'pending', quantity: 2 },
              { type: 'b', state: 'pending', cost_override: { amount: 5, denomination: 'B' } },
            ]),
            request(s.companyId, acc2, [{ type: 'a-call', state: 'pending', quantity: 4 }]),
          ]),
        );
        assert.ok(early.every((o) => o.ok));
        const now = T0 + 2 * HOLD_DURATION_MS;

        const ab: EventInput[] = [
          { type: 'a-call', quantity: 2 },
          { type: 'b', cost_override: { amount: 3, denomination: 'B' } },
        ];
        const ba: EventInput[] = [
          { type: 'b', cost_override: { amount: 1, denomination: 'B' } },
          { type: 'a-call', quantity: 1, state: 'pending' },
        ];
        const groups: IngestRequest[][] = Array.from({ length: 60 }, (_, i) =>
          i % 2 === 0
            ? [request(s.companyId, s.accountId, ab), request(s.companyId, acc2, [{ type: 'a-call' }])]
            : [request(s.companyId, acc2, [{ type: 'a-call', quantity: 3 }]), request(s.companyId, s.accountId, ba)],
        );
        const outcomes = await Promise.all(
          groups.map((g) => store.write((tx) => ingestGroup(ledger.begin(tx, now), g))),
        );
        assert.ok(
          outcomes.flat().every((o) => o.ok),
          'every request succeeded',
        );

        const A = await store.read((tx) => tx.findBalance(s.accountId, 'A'));
        const B = await store.read((tx) => tx.findBalance(s.accountId, 'B'));
        const A2 = await store.read((tx) => tx.findBalance(acc2, 'A'));
        // even groups: A −3, B −3, acc2 A −2 (1.5 rounds up); odd groups: acc2 A −5 (4.5 rounds up), B −1, A holds 2.
        assert.deepEqual([A!.amount, A!.pending], [100_000 - 30 * 3, 30 * 2]);
        assert.deepEqual([B!.amount, B!.pending], [100_000 - 30 * 3 - 30 * 1, 0]);
        assert.deepEqual([A2!.amount, A2!.pending], [100_000 - 30 * 2 - 30 * 5, 0]);
        assert.deepEqual(
          (await store.read((tx) => tx.auditLedger())).filter(
            (v) => v.accountId === s.accountId || v.accountId === acc2,
          ),
          [],
        );
      });

      test('ingest cancels an expired hold before it gates on the balance', async () => {
        const s = await seedCompanyAndAccount(store);
        await seedBalance(store, s.companyId, s.accountId, 'G', 100);
        const held = await store.write((tx) =>
          ingestGroup(ledger.begin(tx, T0), [
            request(s.companyId, s.accountId, [
              { type: 'h', id: 'gate-hold', state: 'pending', cost_override: { amount: 120, denomination: 'G' } },
            ]),
          ]),
        );
        assert.ok(held[0]!.ok, 'a hold may take the available figure below zero');
        const spend = (n: number) => [{ type: 'spend', cost_override: { amount: n, denomination: 'G' } }];
        const refused = await store.write((tx) =>
          ingestGroup(ledger.begin(tx, T0 + HOLD_DURATION_MS - 1), [
            request(s.companyId, s.accountId, spend(60), true),
          ]),
        );
        assert.equal(
          refused[0]!.ok ? 'ok' : refused[0]!.reason,
          'insufficient_balance',
          'the live hold keeps the available figure negative: the gate refuses',
        );
        const later = await store.write((tx) =>
          ingestGroup(ledger.begin(tx, T0 + HOLD_DURATION_MS), [request(s.companyId, s.accountId, spend(60), true)]),
        );
        assert.ok(later[0]!.ok, 'the hold expired: ingest released it first, so the gate passes');
        const g = await store.read((tx) => tx.findBalance(s.accountId, 'G'));
        assert.deepEqual([g!.amount, g!.pending], [40, 0]);
        assert.equal((await store.read((tx) => tx.findEvent(s.companyId, 'gate-hold')))!.state, 'cancelled');
        assert.deepEqual(
          (await store.read((tx) => tx.auditLedger())).filter((v) => v.accountId === s.accountId),
          [],
        );
      });

      test('the same client event id ingested by concurrent transactions is deducted once', async () => {
        const s = await seedCompanyAndAccount(store);
        const acc2 = await seedAccount(store, s.companyId);
        await seedBalance(store, s.companyId, s.accountId, 'credits', 1000);
        await seedBalance(store, s.companyId, acc2, 'credits', 1000);
        for (let round = 0; round < 10; round++) {
          const id = `order-${round}`;
          const ev: EventInput = {
            type: 'charge',
            id,
            cost_override: { amount: 10, denomination: 'credits' },
            metadata: { round },
          };
          const outs = await Promise.all(
            Array.from({ length: 4 }, (_, i) =>
              store.write((tx) =>
                ingestGroup(
                  ledger.begin(tx, T0),
                  // Some racers put another account's request first, so they lock a different balance too.
                  i % 2 === 0
                    ? [request(s.companyId, s.accountId, [ev])]
                    : [
                        request(s.companyId, acc2, [
                          { type: 'other', cost_override: { amount: 1, denomination: 'credits' } },
                        ]),
                        request(s.companyId, s.accountId, [ev]),
                      ],
                ),
              ),
            ),
          );
          for (const o of outs) {
            const mine = o.at(-1)!;
            assert.ok(mine.ok, `round ${round}: every racer is answered with success`);
            assert.deepEqual(mine.value.eventIds, [id]);
          }
        }
        const { balance, transactions } = await balanceState(store, s.accountId, 'credits');
        assert.equal(balance.amount, 1000 - 10 * 10, 'one deduction per client id');
        assert.equal(transactions.filter((r) => r.eventId?.startsWith('order-')).length, 10);
        assert.equal(
          (
            await store.read((tx) =>
              tx.findEventsByIds(
                s.companyId,
                Array.from({ length: 10 }, (_, i) => `order-${i}`),
              ),
            )
          ).length,
          10,
        );
        assert.equal((await store.read((tx) => tx.findBalance(acc2, 'credits')))!.amount, 1000 - 20);

        // The same id with different content, raced: one wins, the other is refused, one deduction.
        const outs = await Promise.all(
          [5, 6].map((amount) =>
            store.write((tx) =>
              ingestGroup(ledger.begin(tx, T0), [
                request(s.companyId, s.accountId, [
                  { type: 'charge', id: 'contested', cost_override: { amount, denomination: 'credits' } },
                ]),
              ]),
            ),
          ),
        );
        const results = outs.map((o) => o[0]!);
        assert.equal(results.filter((r) => r.ok).length, 1);
        const refused = results.find((r) => !r.ok);
        assert.ok(refused && !refused.ok && refused.reason === 'event_id_reused_with_different_content');
        const after = await store.read((tx) => tx.findBalance(s.accountId, 'credits'));
        const won = (await store.read((tx) => tx.findEvent(s.companyId, 'contested')))!.costAmount;
        assert.equal(after!.amount, 900 - won);
        assert.deepEqual(
          (await store.read((tx) => tx.auditLedger())).filter(
            (v) => v.accountId === s.accountId || v.accountId === acc2,
          ),
          [],
        );
      });

      test('IngestBatcher: many concurrent submissions, every one answered, ledger exact', async () => {
        const s = await seedCompanyAndAccount(store);
        await seedBalance(store, s.companyId, s.accountId, 'credits', 0);
        const batcher = new IngestBatcher(
          {
            store,
            clock: new TestClock(T0),
            processors: processorFactory(),
            ledger,
            webhooks: { allowPrivate: false },
          },
          dialect === 'postgres' ? 4 : 1,
        );
        const outs = await Promise.all(
          Array.from({ length: 150 }, (_, i) =>
            batcher.submit(
              request(s.companyId, s.accountId, [
                { type: 't', id: `b-${i % 100}`, cost_override: { amount: 2, denomination: 'credits' } },
              ]),
            ),
          ),
        );
        assert.ok(outs.every((o) => o.ok));
        const b = await store.read((tx) => tx.findBalance(s.accountId, 'credits'));
        assert.equal(b!.amount, -200, '100 distinct ids, each deducted once');
        assert.deepEqual(
          (await store.read((tx) => tx.auditLedger())).filter((v) => v.accountId === s.accountId),
          [],
        );
      });
    });
  });
}
