// Guarantee: on the write routes whose operation is one transaction, the answer to an Idempotency-Key is
// recorded in that transaction. Every commit the server makes is watched: at no commit is the operation
// applied while its key is still unanswered, so no crash point (kill -9 between the operation and its
// answer) lets a retry apply it a second time; the retry replays the answer. And the operation is fenced
// by the claim: a request whose claim was taken over applies nothing (PostgreSQL, where a request can be
// held mid-transaction).
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { ANSWERED_AFTER } from '../../src/http/idempotency.js';
import type { ReadTx, Store } from '../../src/store/types.js';
import {
  HTTP_DIALECTS,
  claimed,
  holdBalancesOf,
  assertError,
  createAccountWithBalance,
  signUpCompany,
  startHarness,
  type Harness,
} from '../support/harness.js';
import { until } from '../support/wait.js';

type Co = Awaited<ReturnType<typeof signUpCompany>>;

/** After each commit of the server's: is the operation applied, and is its key answered? */
interface Watch {
  scope: string;
  key: string;
  applied(tx: ReadTx): Promise<boolean>;
  seen: { applied: boolean; answered: boolean }[];
}

/**
 * The server's store, its writes one at a time, each followed by a look at the database before the next
 * begins: what is seen is the state that commit left (a write in the background, such as an API key's
 * last use, cannot commit between a commit and its look).
 */
function watching(store: Store, current: () => Watch | undefined, queue: { waiting: number }): Store {
  let previous: Promise<unknown> = Promise.resolve();
  return {
    dialect: store.dialect,
    read: (fn) => store.read(fn),
    close: () => store.close(),
    write(fn) {
      queue.waiting++;
      const next = previous.then(async () => {
        queue.waiting--;
        const result = await store.write(fn);
        const w = current();
        if (w) {
          w.seen.push(
            await store.read(async (tx) => ({
              applied: await w.applied(tx),
              answered: ((await tx.idempotency.findIdempotency(w.scope, w.key))?.statusCode ?? null) !== null,
            })),
          );
        }
        return result;
      });
      previous = next.catch(() => undefined);
      return next;
    },
  };
}

interface Case {
  name: string;
  /** The request, after any setup it needs; `applied` says whether its operation is in the database. */
  prepare(co: Co): Promise<{
    method: string;
    path: string;
    body?: unknown;
    auth?: [string, string];
    scope?: string;
    applied(tx: ReadTx): Promise<boolean>;
  }>;
}

for (const dialect of HTTP_DIALECTS) {
  describe(`Idempotency-Key answered in the operation's transaction (${dialect})`, () => {
    let h: Harness;
    let watch: Watch | undefined;
    /** How many of the server's writes wait for the one in progress. */
    const queue = { waiting: 0 };
    before(async () => {
      h = await startHarness(dialect, {}, undefined, undefined, (s) => watching(s, () => watch, queue));
    });
    after(async () => h.close());
    afterEach(async () => {
      watch = undefined;
      await h.audit();
    });

    const cases: Case[] = [
      {
        name: 'an adjustment',
        async prepare(co) {
          const acc = await createAccountWithBalance(h, co, 'tokens', 100);
          return {
            method: 'POST',
            path: `/v1/accounts/${acc}/balance/tokens/adjustments`,
            body: { amount: 7 },
            applied: async (tx) => (await tx.balances.listBalances(acc))[0]!.amount === 107,
          };
        },
      },
      {
        name: 'an account',
        async prepare(co) {
          return {
            method: 'POST',
            path: `/v1/companies/${co.companyId}/accounts`,
            body: { name: 'Once' },
            applied: async (tx) =>
              (await tx.accounts.listAccounts(co.companyId, { limit: 100 }))!.rows.some((a) => a.name === 'Once'),
          };
        },
      },
      {
        name: 'a balance',
        async prepare(co) {
          const a = await h.request('POST', `/v1/companies/${co.companyId}/accounts`, { auth: co.auth, body: {} });
          const acc: string = a.body.data.account_id;
          return {
            method: 'POST',
            path: `/v1/accounts/${acc}/balance/credits`,
            body: { amount: 5 },
            applied: async (tx) => (await tx.balances.listBalances(acc)).length === 1,
          };
        },
      },
      {
        name: 'a plan',
        async prepare(co) {
          return {
            method: 'POST',
            path: `/v1/companies/${co.companyId}/plan`,
            body: {
              name: 'Pro',
              charge_amount: 1000,
              billing_period: 'month',
              balances: [{ denomination: 'tokens', amount: 100, overage_charge_amount: 1 }],
            },
            applied: async (tx) => (await tx.plans.listPlans(co.companyId, { limit: 10 }))!.rows.length === 1,
          };
        },
      },
      {
        name: 'a webhook',
        async prepare(co) {
          return {
            method: 'POST',
            path: '/v1/webhooks',
            body: { type: 'balance_change', url: 'http://127.0.0.1:9/hook' },
            applied: async (tx) => (await tx.webhooks.countWebhookSubscriptions(co.companyId)) === 1,
          };
        },
      },
      {
        name: 'a webhook deleted',
        async prepare(co) {
          const w = await h.request('POST', '/v1/webhooks', {
            auth: co.auth,
            body: { type: 'balance_change', url: 'http://127.0.0.1:9/gone' },
          });
          assert.equal(w.status, 200, w.text);
          return {
            method: 'DELETE',
            path: `/v1/webhooks/${w.body.data.webhook_id}`,
            applied: async (tx) => (await tx.webhooks.countWebhookSubscriptions(co.companyId)) === 0,
          };
        },
      },
      {
        name: 'an API key',
        async prepare(co) {
          return {
            method: 'POST',
            path: `/v1/companies/${co.companyId}/api_keys`,
            applied: async (tx) => (await tx.identity.listApiKeys(co.companyId)).length === 2,
          };
        },
      },
      {
        name: 'an API key revoked',
        async prepare(co) {
          const k = await h.request('POST', `/v1/companies/${co.companyId}/api_keys`, { auth: co.auth });
          assert.equal(k.status, 200, k.text);
          const keyId: string = k.body.data.key_id;
          return {
            method: 'DELETE',
            path: `/v1/companies/${co.companyId}/api_keys/${keyId}`,
            applied: async (tx) =>
              (await tx.identity.listApiKeys(co.companyId)).find((r) => r.keyId === keyId)?.revokedAtMs != null,
          };
        },
      },
      {
        name: 'a card',
        async prepare(co) {
          const acc = await createAccountWithBalance(h, co, 'tokens', 100);
          return {
            method: 'POST',
            path: `/v1/accounts/${acc}/card`,
            body: { token: 'tok_visa' },
            applied: async (tx) => (await tx.cards.findCard(acc)) !== undefined,
          };
        },
      },
      {
        name: 'a company (a user’s request)',
        async prepare(co) {
          return {
            method: 'POST',
            path: '/v1/companies',
            body: { name: 'Second' },
            auth: [co.email, co.password],
            scope: `user:${co.userId}`,
            applied: async (tx) => (await tx.identity.listOwnedCompanies(co.userId)).length === 2,
          };
        },
      },
      {
        name: 'a price',
        async prepare(co) {
          return {
            method: 'PUT',
            path: '/v1/prices/once',
            body: { denomination: 'tokens', unit_amount: '0.25' },
            applied: async (tx) => (await tx.prices.findPrices(co.companyId, ['once'])).length === 1,
          };
        },
      },
      {
        name: 'an account changed',
        async prepare(co) {
          const acc = await createAccountWithBalance(h, co, 'tokens', 100);
          return {
            method: 'PUT',
            path: `/v1/accounts/${acc}`,
            body: { name: 'Renamed' },
            applied: async (tx) => (await tx.accounts.findAccount(co.companyId, acc))?.name === 'Renamed',
          };
        },
      },
      {
        name: 'auto-refill settings',
        async prepare(co) {
          const acc = await createAccountWithBalance(h, co, 'tokens', 100);
          return {
            method: 'PUT',
            path: `/v1/accounts/${acc}/balance/tokens/autorefill`,
            body: { threshold: 10, amount: 50, usd_charge: 500 },
            applied: async (tx) => (await tx.balances.findBalance(acc, 'tokens'))?.refillThreshold === 10,
          };
        },
      },
      {
        name: 'a user changed',
        async prepare(co) {
          return {
            method: 'PATCH',
            path: `/v1/users/${co.userId}`,
            body: { name: 'Ada Renamed' },
            auth: [co.email, co.password],
            scope: `user:${co.userId}`,
            applied: async (tx) => (await tx.identity.findUserById(co.userId))?.name === 'Ada Renamed',
          };
        },
      },
    ];

    for (const c of cases) {
      test(`${c.name}: applied and answered in one commit; a retry replays it`, async () => {
        const co = await signUpCompany(h);
        const r = await c.prepare(co);
        const key = `once-${c.name.replaceAll(/[^a-z]+/g, '-')}`;
        const auth = r.auth ?? co.auth;
        const send = () =>
          h.request(r.method, r.path, {
            auth,
            headers: { 'idempotency-key': key },
            ...(r.body !== undefined ? { body: r.body } : {}),
          });
        watch = { scope: r.scope ?? `company:${co.companyId}`, key, applied: r.applied, seen: [] };
        const first = await send();
        assert.equal(first.status, 200, first.text);
        const seen = watch.seen;
        watch = undefined;
        assert.ok(
          seen.some((s) => s.applied),
          `the operation is applied by one of the commits: ${JSON.stringify(seen)}`,
        );
        assert.deepEqual(
          seen.filter((s) => s.applied !== s.answered),
          [],
          `every commit has the operation and its answer both or neither: ${JSON.stringify(seen)}`,
        );
        const retry = await send();
        assert.equal(retry.status, 200, retry.text);
        assert.equal(retry.headers.get('idempotent-replayed'), 'true');
        assert.equal(retry.text, first.text, 'the replay is the answer, byte for byte');
      });
    }

    test('every write route records its answer with its change, or is listed in ANSWERED_AFTER with why', () => {
      // The routes whose answer is written in the transaction of their change: runCommand, or (ingest) the group.
      const withTheChange = [
        'POST /v1/users',
        'PATCH /v1/users/:user_id',
        'POST /v1/email_verifications',
        'POST /v1/password_resets/complete',
        'POST /v1/companies',
        'POST /v1/companies/:company_id/api_keys',
        'DELETE /v1/companies/:company_id/api_keys/:key_id',
        'POST /v1/companies/:company_id/accounts',
        'PUT /v1/accounts/:account_id',
        'POST /v1/accounts/:account_id/balance/:denomination',
        'POST /v1/accounts/:account_id/balance/:denomination/adjustments',
        'PUT /v1/prices/:type',
        'POST /v1/accounts/:account_id/balance/:denomination/grants',
        'PATCH /v1/grants/:grant_id',
        'POST /v1/grants/:grant_id/void',
        'POST /v1/accounts/:account_id/events',
        'POST /v1/events',
        'POST /v1/accounts/:account_id/card',
        'PUT /v1/accounts/:account_id/balance/:denomination/autorefill',
        'PUT /v1/accounts/:account_id/auto_refill',
        'PUT /v1/accounts/:account_id/balance/:denomination/limits',
        'POST /v1/accounts/:account_id/alerts',
        'DELETE /v1/alerts/:alert_id',
        'PUT /v1/features/:key',
        'DELETE /v1/features/:key',
        'PUT /v1/accounts/:account_id/features/:key',
        'DELETE /v1/accounts/:account_id/features/:key',
        'PUT /v1/plans/:plan_id/features',
        'POST /v1/accounts/:account_id/portal_sessions',
        'DELETE /v1/portal_sessions/:session_id',
        'PUT /v1/topup_offers/:offer_id',
        'DELETE /v1/topup_offers/:offer_id',
        'POST /v1/accounts/:account_id/leases',
        'POST /v1/leases/:lease_id/close',
        'POST /v1/companies/:company_id/plan',
        'POST /v1/webhooks',
        'DELETE /v1/webhooks/:webhook_id',
      ];
      // idempotency: false: a session's answer sets a cookie; the check writes nothing; the sandbox's authorize page
      // is a form a customer's browser posts (its answer converges: a charge waiting for the customer ends once).
      const keyless = [
        'POST /v1/sessions',
        'POST /v1/accounts/:account_id/check',
        'POST /sandbox/authorize/:charge_id',
      ];
      const writes = h.server.routes
        .filter((r) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method))
        .map((r) => `${r.method} ${r.url}`);
      assert.deepEqual(
        [...writes].sort(),
        [...withTheChange, ...Object.keys(ANSWERED_AFTER), ...keyless].sort(),
        'a new write route must say how its Idempotency-Key answer is recorded',
      );
      for (const [route, why] of Object.entries(ANSWERED_AFTER)) assert.ok(why.length > 20, `${route} says why`);
    });

    test('an answer that shows a secret is recorded sealed, and replayed in clear', async () => {
      const co = await signUpCompany(h);
      const headers = { 'idempotency-key': 'sealed-key' };
      const path = `/v1/companies/${co.companyId}/api_keys`;
      const first = await h.request('POST', path, { auth: co.auth, headers });
      assert.equal(first.status, 200, first.text);
      const row = await h.store.read((tx) => tx.idempotency.findIdempotency(`company:${co.companyId}`, 'sealed-key'));
      assert.ok(row?.responseBody, 'answered');
      assert.equal(row.responseBody.includes(first.body.data.api_key), false, 'the key is not stored in clear');
      const retry = await h.request('POST', path, { auth: co.auth, headers });
      assert.equal(retry.text, first.text);
    });

    test('a refused operation records nothing in its transaction; its refusal is the answer', async () => {
      const co = await signUpCompany(h);
      const acc = await createAccountWithBalance(h, co, 'tokens', 100);
      const headers = { 'idempotency-key': 'refused-1' };
      const path = `/v1/accounts/${acc}/balance/credits/adjustments`;
      const first = await h.request('POST', path, { auth: co.auth, headers, body: { amount: 3 } });
      assertError(first, 404, 'not_found');
      const retry = await h.request('POST', path, { auth: co.auth, headers, body: { amount: 3 } });
      assert.equal(retry.status, 404);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    });

    if (dialect === 'postgres') {
      test('a request whose claim was taken over mid-operation applies nothing: 409 in use', async () => {
        const co = await signUpCompany(h);
        const acc = await createAccountWithBalance(h, co, 'tokens', 100);
        const path = `/v1/accounts/${acc}/balance/tokens/adjustments`;
        // The balance row is held: the request claims its key, then waits inside its transaction.
        const hold = await holdBalancesOf(h, acc);
        try {
          const first = h.request('POST', path, {
            auth: co.auth,
            body: { amount: 7 },
            headers: { 'idempotency-key': 'stolen-1' },
          });
          const scope = `company:${co.companyId}`;
          await claimed(h, scope, 'stolen-1');
          await hold.blocked();
          // Meanwhile its claim passes to another owner (as when a lease lapses and a retry takes it over).
          const stolen = await hold.sql("UPDATE idempotency_keys SET owner = 'another' WHERE key = 'stolen-1'");
          assert.equal(stolen.rowCount, 1);
          await hold.release();
          const done = await first;
          assertError(done, 409, 'conflict');
          const b = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
          assert.equal(b.body.data.amount, 100, 'nothing applied');
          const row = await h.store.read((tx) => tx.idempotency.findIdempotency(scope, 'stolen-1'));
          assert.equal(row?.statusCode, null, 'the key is left to its new owner');
        } finally {
          await hold.end();
        }
      });

      test('an ingest request whose claim was taken over mid-group applies nothing; the rest commits', async () => {
        const co = await signUpCompany(h);
        const held = await createAccountWithBalance(h, co, 'tokens', 100);
        const other = await createAccountWithBalance(h, co, 'tokens', 100);
        const events = [{ type: 'call', cost_override: { amount: 3, denomination: 'tokens' } }];
        const hold = await holdBalancesOf(h, held);
        try {
          const stolen = h.request('POST', `/v1/accounts/${held}/events`, {
            auth: co.auth,
            body: events,
            headers: { 'idempotency-key': 'stolen-ingest' },
          });
          const scope = `company:${co.companyId}`;
          await claimed(h, scope, 'stolen-ingest');
          await hold.blocked();
          const waitingBefore = queue.waiting;
          const beside = h.request('POST', `/v1/accounts/${other}/events`, { auth: co.auth, body: events });
          // The other request's group is written after the held one, whose transaction is still open.
          await until('the other request waits to be written', () => queue.waiting > waitingBefore);
          const taken = await hold.sql("UPDATE idempotency_keys SET owner = 'another' WHERE key = 'stolen-ingest'");
          assert.equal(taken.rowCount, 1);
          await hold.release();
          assertError(await stolen, 409, 'conflict');
          const ok = await beside;
          assert.equal(ok.status, 200, ok.text);
          const balanceOf = async (acc: string) =>
            (await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth })).body.data.amount;
          assert.equal(await balanceOf(held), 100, 'nothing of the stolen request applied');
          assert.equal(await balanceOf(other), 97, 'the other request applied');
        } finally {
          await hold.end();
        }
      });
    }
  });
}
