// Guarantee: an Idempotency-Key whose request died mid-flight (its claim left unanswered, as kill -9
// leaves it) is taken over once the claim's lease is over, and the retry runs the request exactly once;
// a live claim still answers 409 idempotency_key_in_use to a duplicate, even past the lease while its
// request keeps renewing it; only the same request may take a key over.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { canonicalJson, sha256Hex } from '../../src/lib/canonical.js';
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

const LEASE_MS = 1_000;

for (const dialect of HTTP_DIALECTS) {
  describe(`idempotency leases (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect, { BILLING_IDEMPOTENCY_LEASE_MS: String(LEASE_MS) });
    });
    after(async () => h.close());
    afterEach(async () => h.audit());

    /** The claim row a request leaves when its process dies before answering. */
    async function leaveClaim(companyId: string, url: string, body: unknown, key: string, leaseExpiresAtMs: number) {
      const requestHash = sha256Hex(canonicalJson({ m: 'POST', u: url, b: body }));
      const row = {
        scope: `company:${companyId}`,
        key,
        requestHash,
        statusCode: null,
        responseBody: null,
        createdAtMs: h.server.clock.now(),
        owner: 'the-dead-owner',
        leaseExpiresAtMs,
      };
      assert.equal(await h.store.write((tx) => tx.idempotency.claimIdempotency(row, 0)), true);
    }

    test('a dead owner’s claim is taken over after its lease: the retry runs once, then replays', async () => {
      const co = await signUpCompany(h);
      const acc = await createAccountWithBalance(h, co, 'tokens', 100);
      const url = `/v1/accounts/${acc}/balance/tokens/adjustments`;
      const body = { amount: 7 };
      await leaveClaim(co.companyId, url, body, 'crashed-1', Date.now() - 1);
      const send = (b: unknown = body) =>
        h.request('POST', url, { auth: co.auth, body: b, headers: { 'idempotency-key': 'crashed-1' } });

      assertError(await send({ amount: 8 }), 409, 'conflict');
      const retry = await send();
      assert.equal(retry.status, 200, retry.text);
      assert.equal(retry.headers.get('idempotent-replayed'), null, 'run, not replayed');
      const again = await send();
      assert.equal(again.status, 200);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.body, retry.body);
      const b = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
      assert.equal(b.body.data.amount, 107, 'applied exactly once');
    });

    test('a live claim answers 409 in_use to a duplicate; nothing is applied by it', async () => {
      const co = await signUpCompany(h);
      const acc = await createAccountWithBalance(h, co, 'tokens', 100);
      const url = `/v1/accounts/${acc}/balance/tokens/adjustments`;
      const body = { amount: 7 };
      await leaveClaim(co.companyId, url, body, 'live-1', Date.now() + 3_600_000);
      const dup = await h.request('POST', url, { auth: co.auth, body, headers: { 'idempotency-key': 'live-1' } });
      assertError(dup, 409, 'conflict');
      assert.match(dup.body.error.message, /in progress/);
      const b = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
      assert.equal(b.body.data.amount, 100);
    });

    if (dialect === 'postgres') {
      test('a slow live request renews its claim past the lease: a duplicate is 409, applied once', async () => {
        const co = await signUpCompany(h);
        const acc = await createAccountWithBalance(h, co, 'tokens', 100);
        const url = `/v1/accounts/${acc}/balance/tokens/adjustments`;
        const body = { amount: 5 };
        const headers = { 'idempotency-key': 'slow-1' };
        // Another connection holds the balance row: the first request waits on it, running.
        const hold = await holdBalancesOf(h, acc);
        try {
          const first = h.request('POST', url, { auth: co.auth, body, headers });
          // The claim is written before the handler blocks; wait for it, and for the request to wait on the rows.
          const scope = `company:${co.companyId}`;
          await claimed(h, scope, 'slow-1');
          const firstLease = (await h.store.read((tx) => tx.idempotency.findIdempotency(scope, 'slow-1')))
            ?.leaseExpiresAtMs;
          assert.ok(typeof firstLease === 'number', 'a claim in progress has a lease');
          await hold.blocked();
          // Then until two leases have passed since it was claimed and the claim, renewed, is still live.
          await until('the claim is renewed past its first lease', async () => {
            const row = await h.store.read((tx) => tx.idempotency.findIdempotency(scope, 'slow-1'));
            const now = Date.now();
            return now > firstLease + LEASE_MS && (row?.leaseExpiresAtMs ?? 0) > now;
          });
          const dup = await h.request('POST', url, { auth: co.auth, body, headers });
          assertError(dup, 409, 'conflict');
          await hold.release();
          const done = await first;
          assert.equal(done.status, 200, done.text);
          const replay = await h.request('POST', url, { auth: co.auth, body, headers });
          assert.equal(replay.headers.get('idempotent-replayed'), 'true');
          const b = await h.request('GET', `/v1/accounts/${acc}/balance/tokens`, { auth: co.auth });
          assert.equal(b.body.data.amount, 105, 'applied exactly once');
        } finally {
          await hold.end();
        }
      });
    }
  });
}
