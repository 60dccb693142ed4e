// Guarantee: webhook subscriptions are created, listed (never with secrets), paged and deleted per company; another
// company's are 404; bad input is 400 with the contract's error body.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HTTP_DIALECTS, assertError, signUpCompany, startHarness, type Harness } from '../support/harness.js';

for (const dialect of HTTP_DIALECTS) {
  describe(`webhook subscriptions (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(async () => h.close());

    test('create shows the secret once; list without secrets, paged newest first; delete', async () => {
      const co = await signUpCompany(h);
      const created = await h.request('POST', '/v1/webhooks', {
        auth: co.auth,
        body: { type: 'balance_change', url: 'https://example.com/hooks' },
      });
      assert.equal(created.status, 200, created.text);
      const w = created.body.data;
      assert.match(w.webhook_id, /^wh_/);
      assert.match(w.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      assert.deepEqual(
        { type: w.type, url: w.url, threshold: w.threshold },
        { type: 'balance_change', url: 'https://example.com/hooks', threshold: null },
      );
      assert.ok(!Number.isNaN(Date.parse(w.created_at)));
      const t = await h.request('POST', '/v1/webhooks', {
        auth: co.auth,
        body: { type: 'threshold', url: 'https://example.com/t', threshold: 500 },
      });
      assert.equal(t.status, 200, t.text);
      assert.equal(t.body.data.threshold, 500);
      await h.request('POST', '/v1/webhooks', {
        auth: co.auth,
        body: { type: 'auto_refill', url: 'http://example.com/r' },
      });

      const page1 = await h.request('GET', '/v1/webhooks?limit=2', { auth: co.auth });
      assert.equal(page1.status, 200, page1.text);
      assert.equal(page1.body.data.length, 2);
      assert.equal(page1.body.has_more, true);
      assert.deepEqual(
        page1.body.data.map((x: any) => x.type),
        ['auto_refill', 'threshold'],
      );
      assert.ok(!page1.text.includes('whsec_'), 'no secret in the list');
      assert.ok(!('secret' in page1.body.data[0]));
      const page2 = await h.request('GET', `/v1/webhooks?limit=2&starting_after=${page1.body.next_cursor}`, {
        auth: co.auth,
      });
      assert.deepEqual(
        page2.body.data.map((x: any) => x.webhook_id),
        [w.webhook_id],
      );
      assert.equal(page2.body.has_more, false);
      assert.equal(page2.body.next_cursor, null);

      const del = await h.request('DELETE', `/v1/webhooks/${w.webhook_id}`, { auth: co.auth });
      assert.equal(del.status, 200, del.text);
      assert.deepEqual(del.body, { webhooks_deleted: w.webhook_id });
      assertError(await h.request('DELETE', `/v1/webhooks/${w.webhook_id}`, { auth: co.auth }), 404, 'not_found');
      assertError(
        await h.request('GET', `/v1/webhooks/${w.webhook_id}/deliveries`, { auth: co.auth }),
        404,
        'not_found',
      );
      const left = await h.request('GET', '/v1/webhooks', { auth: co.auth });
      assert.equal(left.body.data.length, 2);
    });

    test('a live subscription repeated is 409 naming it; another threshold or after a delete is new', async () => {
      const co = await signUpCompany(h);
      const create = (body: Record<string, unknown>) => h.request('POST', '/v1/webhooks', { auth: co.auth, body });
      const first = await create({ type: 'threshold', url: 'https://example.com/t', threshold: 10 });
      assert.equal(first.status, 200, first.text);
      const again = await create({ type: 'threshold', url: 'https://example.com/t', threshold: 10 });
      assertError(again, 409, 'conflict');
      assert.equal(again.body.error.code, 'webhook_already_exists');
      assert.deepEqual(again.body.error.details, { webhook_id: first.body.data.webhook_id });
      const other = await create({ type: 'threshold', url: 'https://example.com/t', threshold: 20 });
      assert.equal(other.status, 200, other.text);
      const otherType = await create({ type: 'balance_change', url: 'https://example.com/t' });
      assert.equal(otherType.status, 200, otherType.text);
      const del = await h.request('DELETE', `/v1/webhooks/${first.body.data.webhook_id}`, { auth: co.auth });
      assert.equal(del.status, 200, del.text);
      const afterDelete = await create({ type: 'threshold', url: 'https://example.com/t', threshold: 10 });
      assert.equal(afterDelete.status, 200, afterDelete.text);
      const list = await h.request('GET', '/v1/webhooks?limit=100', { auth: co.auth });
      assert.equal(list.body.data.length, 3, 'the refused one created nothing');
    });

    test("another company's webhooks and deliveries are 404, like missing ones", async () => {
      const a = await signUpCompany(h);
      const b = await signUpCompany(h);
      const w = (
        await h.request('POST', '/v1/webhooks', {
          auth: a.auth,
          body: { type: 'balance_change', url: 'https://example.com/a' },
        })
      ).body.data;
      assertError(await h.request('DELETE', `/v1/webhooks/${w.webhook_id}`, { auth: b.auth }), 404, 'not_found');
      assertError(
        await h.request('GET', `/v1/webhooks/${w.webhook_id}/deliveries`, { auth: b.auth }),
        404,
        'not_found',
      );
      assertError(await h.request('POST', '/v1/webhooks/deliveries/cl_nope/retry', { auth: b.auth }), 404, 'not_found');
      assert.deepEqual((await h.request('GET', '/v1/webhooks', { auth: b.auth })).body.data, []);
      assertError(await h.request('GET', '/v1/webhooks'), 401, 'authentication_required');
    });

    test(
      'bad input: unknown type, non-http(s) url, negative threshold, threshold on another type, unknown field, bad ' +
        'cursor',
      async () => {
        const co = await signUpCompany(h);
        const post = (body: unknown) => h.request('POST', '/v1/webhooks', { auth: co.auth, body });
        assertError(await post({ type: 'balance_changed', url: 'https://example.com' }), 400, 'invalid_request');
        for (const url of [
          'ftp://example.com/x',
          'file:///etc/passwd',
          'javascript:alert(1)',
          'example.com/hooks',
          '',
          'https://',
          'https://user:pw@example.com/',
        ]) {
          assertError(await post({ type: 'balance_change', url }), 400, 'invalid_request');
        }
        assertError(
          await post({ type: 'threshold', url: 'https://example.com', threshold: -1 }),
          400,
          'invalid_request',
        );
        assertError(
          await post({ type: 'threshold', url: 'https://example.com', threshold: 1.5 }),
          400,
          'invalid_request',
        );
        assertError(
          await post({ type: 'threshold', url: 'https://example.com', threshold: '10' }),
          400,
          'invalid_request',
        );
        assertError(
          await post({ type: 'balance_change', url: 'https://example.com', threshold: 10 }),
          400,
          'invalid_request',
        );
        assertError(
          await post({ type: 'balance_change', url: 'https://example.com', secret: 'whsec_x' }),
          400,
          'invalid_request',
        );
        assertError(await post({ url: 'https://example.com' }), 400, 'invalid_request');
        assertError(
          await h.request('GET', '/v1/webhooks?starting_after=wh_unknown', { auth: co.auth }),
          400,
          'invalid_request',
        );
        assert.deepEqual(
          (await h.request('GET', '/v1/webhooks', { auth: co.auth })).body.data,
          [],
          'nothing was registered',
        );
      },
    );

    test('a private address is refused without BILLING_WEBHOOK_ALLOW_PRIVATE=1 and accepted with it', async () => {
      const co = await signUpCompany(h);
      const ok = await h.request('POST', '/v1/webhooks', {
        auth: co.auth,
        body: { type: 'balance_change', url: 'http://127.0.0.1:9/hooks' },
      });
      assert.equal(ok.status, 200, 'allowed: this harness runs with the opt-in');
      const strict = await startHarness(dialect, { BILLING_WEBHOOK_ALLOW_PRIVATE: '0' });
      try {
        const c2 = await signUpCompany(strict);
        const r = await strict.request('POST', '/v1/webhooks', {
          auth: c2.auth,
          body: { type: 'balance_change', url: 'http://127.0.0.1:9/hooks' },
        });
        assertError(r, 400, 'invalid_request');
        assert.equal(r.body.error.param, 'url');
        assert.equal(r.body.error.code, 'webhook_url_not_allowed');
      } finally {
        await strict.close();
      }
    });

    test('the OpenAPI document describes the webhook endpoints', async () => {
      const doc = await h.request('GET', '/openapi.json');
      assert.equal(doc.status, 200);
      for (const path of [
        '/v1/webhooks',
        '/v1/webhooks/{webhook_id}',
        '/v1/webhooks/{webhook_id}/deliveries',
        '/v1/webhooks/deliveries/{callback_id}/retry',
      ]) {
        assert.ok(doc.body.paths[path], path);
      }
      assert.match(JSON.stringify(doc.body.paths['/v1/webhooks'].post), /Standard Webhooks/);
    });

    test('idempotent creation: the same Idempotency-Key replays the same webhook (and secret)', async () => {
      const co = await signUpCompany(h);
      const opts = {
        auth: co.auth,
        body: { type: 'negative_balance', url: 'https://example.com/n' },
        headers: { 'idempotency-key': 'k1' },
      };
      const a = await h.request('POST', '/v1/webhooks', opts);
      const b = await h.request('POST', '/v1/webhooks', opts);
      assert.equal(b.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(b.body, a.body);
      assert.equal((await h.request('GET', '/v1/webhooks', { auth: co.auth })).body.data.length, 1);
    });
  });
}
