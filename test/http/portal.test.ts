// Guarantees (contract "Customer portal, top-ups and receipts": sessions and the portal's API), over HTTP on SQLite
// and PostgreSQL:
// - a company opens a portal session for its account: 201 with the url `{public url}/portal/{session_id}#pt_…`;
//   the token is stored only as a hash (the replayed answer of an Idempotency-Key is sealed: no token in the
//   database);
// - the portal's API answers with `Authorization: Bearer <token>` for that account only: the account, its company's
//   name, balances, grants, transactions, usage, charges and receipts, as the company API answers them; another
//   account's charge is 404;
// - credentials never cross: every company route refuses a portal token (401), every portal route a company key and
//   a user's password (401); a malformed, unknown, revoked or expired token is 401 with a Bearer challenge;
// - bad input 400 naming the field (scopes, ttl_seconds, return_url, frame_ancestors), another company's account or
//   session 404; the ledger audit is clean.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertError, HTTP_DIALECTS, signUpCompany, startHarness } from '../support/harness.js';
import { attachCard, putAutoRefill, runDue, type Co } from '../support/money.js';

type Operation = { method: string; path: string; security: Record<string, string[]>[] };

function operationsOf(doc: { paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>> }) {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(item))
      out.push({
        method: method.toUpperCase(),
        path: path.replace('{user_id}', '1').replace(/\{[^}]+\}/g, 'x_1'),
        security: op.security ?? [],
      });
  return out;
}

for (const dialect of HTTP_DIALECTS) {
  describe(`customer portal sessions and API (${dialect})`, () => {
    test('a session lets its account in, and only it; credentials never cross; revoked and expired: 401', async () => {
      const h = await startHarness(dialect);
      try {
        const co = await signUpCompany(h, 'Acme');
        const other = await signUpCompany(h, 'Other');
        const call = (method: string, path: string, opts: { body?: unknown; c?: Co; headers?: object } = {}) =>
          h.request(method, path, {
            ...(opts.headers === undefined ? { auth: (opts.c ?? co).auth } : {}),
            ...(opts.body === undefined ? {} : { body: opts.body }),
            headers: { ...(opts.headers ?? {}) } as Record<string, string>,
          });
        const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
        const account = async (c: Co, name: string) => {
          const r = await call('POST', `/v1/companies/${c.companyId}/accounts`, {
            body: { name, email: 'a@x.test' },
            c,
          });
          assert.equal(r.status, 200, r.text);
          const id = r.body.data.account_id as string;
          assert.equal(
            (await call('POST', `/v1/accounts/${id}/balance/tokens`, { body: { amount: 600 }, c })).status,
            200,
          );
          await attachCard(h, c, id, 'tok_visa');
          await putAutoRefill(h, c, id, 'tokens', { threshold: 500, amount: 1000, usd_charge: 700 });
          const e = await call('POST', `/v1/accounts/${id}/events`, {
            body: [{ type: 'chat', cost_override: { amount: 200, denomination: 'tokens' } }],
            c,
          });
          assert.equal(e.status, 200, e.text);
          await runDue(h, c); // a refill: a succeeded charge with a receipt
          return id;
        };
        const ann = await account(co, 'Ann');
        const bob = await account(co, 'Bob');
        const cy = await account(other, 'Cy');

        const opened = await call('POST', `/v1/accounts/${ann}/portal_sessions`, {
          body: {},
          headers: {
            authorization: `Basic ${Buffer.from(co.auth.join(':')).toString('base64')}`,
            'idempotency-key': 'portal-1',
          },
        });
        assert.equal(opened.status, 201, opened.text);
        const s = opened.body.data;
        assert.deepEqual(
          [s.account_id, s.scopes, s.return_url, s.frame_ancestors, s.revoked_at],
          [ann, ['read'], null, [], null],
        );
        assert.equal(Date.parse(s.expires_at) - Date.parse(s.created_at), 3_600_000);
        const m = /^https?:\/\/[^/]+\/portal\/(ps_[0-9A-Za-z]+)#(pt_[0-9A-Za-z]{32})$/.exec(s.url);
        assert.ok(m, s.url);
        assert.equal(m[1], s.session_id);
        const token = m[2]!;
        const replay = await call('POST', `/v1/accounts/${ann}/portal_sessions`, {
          body: {},
          headers: {
            authorization: `Basic ${Buffer.from(co.auth.join(':')).toString('base64')}`,
            'idempotency-key': 'portal-1',
          },
        });
        assert.equal(replay.body.data.url, s.url, 'the replay is the same session');
        const stored = await h.store.read(async (tx) => {
          const row = await tx.portalSessions.findPortalSession(co.companyId, s.session_id);
          const idem = await tx.idempotency.findIdempotency(`company:${co.companyId}`, 'portal-1');
          return { row, idem: JSON.stringify(idem) };
        });
        assert.notEqual(stored.row?.tokenHash, token);
        assert.ok(!stored.idem.includes(token), 'the stored answer is sealed: the token is not in the database');

        // The portal's API, for Ann only.
        const acc = await call('GET', '/v1/portal/account', { headers: bearer(token) });
        assert.equal(acc.status, 200, acc.text);
        assert.deepEqual(acc.body.data.account, { account_id: ann, name: 'Ann', email: 'a@x.test' });
        assert.deepEqual(acc.body.data.company, { name: 'Acme' });
        assert.deepEqual(acc.body.data.scopes, ['read']);
        const companyView = (await call('GET', `/v1/accounts/${ann}`)).body.data;
        assert.deepEqual(acc.body.data.balances, companyView.balances);
        const day = `${s.created_at.slice(0, 10)}T00:00:00Z`;
        const to = new Date(Date.parse(day) + 2 * 86_400_000).toISOString();
        for (const path of [
          'balance/tokens/grants',
          'transactions',
          'charges',
          `usage?window=day&from=${day}&to=${to}`,
        ]) {
          const portal = await call('GET', `/v1/portal/${path.replace('balance/', 'balances/')}`, {
            headers: bearer(token),
          });
          assert.equal(portal.status, 200, `${path}: ${portal.text}`);
          const company = await call('GET', `/v1/accounts/${ann}/${path}`);
          assert.deepEqual(portal.body, company.body, `${path}: as the company API answers it`);
          assert.ok(portal.body.data.length > 0, `${path}: not empty`);
        }
        const [annCharge] = (await call('GET', '/v1/portal/charges', { headers: bearer(token) })).body.data;
        const receipt = await call('GET', `/v1/portal/charges/${annCharge.charge_id}/receipt`, {
          headers: { ...bearer(token), accept: 'application/json' },
        });
        assert.equal(receipt.status, 200, receipt.text);
        assert.equal(receipt.body.data.receipt_number, annCharge.receipt_number);
        const page = await call('GET', `/v1/portal/charges/${annCharge.charge_id}/receipt`, { headers: bearer(token) });
        assert.match(page.text, /<h1>Receipt R-\d+<\/h1>/);
        const [bobCharge] = (await call('GET', `/v1/accounts/${bob}/charges`)).body.data;
        const notHers = await call('GET', `/v1/portal/charges/${bobCharge.charge_id}/receipt`, {
          headers: { ...bearer(token), accept: 'application/json' },
        });
        assertError(notHers, 404, 'not_found');
        assert.equal(notHers.body.error.param, 'charge_id');

        // Credentials never cross: every route of the document, with the wrong kind.
        const doc = (await h.request('GET', '/openapi.json')).body;
        const ops = operationsOf(doc);
        const portalOps = ops.filter((o) => o.path.startsWith('/v1/portal/'));
        assert.equal(portalOps.length, 8);
        const wrong: string[] = [];
        for (const o of ops) {
          const kinds = o.security.flatMap((x) => Object.keys(x)).sort();
          if (o.path.startsWith('/v1/portal/')) {
            if (JSON.stringify(kinds) !== '["portalToken"]') wrong.push(`${o.method} ${o.path}: ${kinds}`);
            for (const creds of [co.auth, [co.email, co.password]] as const) {
              const r = await h.request(o.method, o.path, { auth: creds as [string, string] });
              if (r.status !== 401) wrong.push(`${o.method} ${o.path} with ${creds[0]}: ${r.status}`);
            }
          } else if (kinds.length > 0) {
            if (kinds.includes('portalToken')) wrong.push(`${o.method} ${o.path} takes a portal token`);
            const r = await h.request(o.method, o.path, {
              headers: bearer(token),
              ...(o.method === 'GET' || o.method === 'HEAD'
                ? {}
                : { raw: o.path === '/v1/companies' ? '{"name":"X"}' : '{}' }),
            });
            if (r.status !== 401) wrong.push(`${o.method} ${o.path} with a portal token: ${r.status} ${r.text}`);
          }
        }
        assert.deepEqual(wrong, []);
        for (const t of ['', 'pt_short', `pt_${'0'.repeat(32)}`, `${token}x`, token.toLowerCase()]) {
          const r = await call('GET', '/v1/portal/account', { headers: bearer(t) });
          assertError(r, 401, 'authentication_required');
          // A Bearer challenge: a Basic one would make a browser ask the customer for a password.
          assert.equal(r.headers.get('www-authenticate'), 'Bearer realm="portal"');
        }

        // Revoked: 401 at once; another company's session: 404.
        const notTheirs = await call('DELETE', `/v1/portal_sessions/${s.session_id}`, { c: other });
        assertError(notTheirs, 404, 'not_found');
        assert.equal(notTheirs.body.error.param, 'session_id');
        assert.equal((await call('GET', '/v1/portal/account', { headers: bearer(token) })).status, 200);
        const revoked = await call('DELETE', `/v1/portal_sessions/${s.session_id}`);
        assert.equal(revoked.status, 200, revoked.text);
        assert.ok(revoked.body.data.revoked_at !== null);
        assert.equal(revoked.body.data.url, undefined, 'the token is never shown again');
        assertError(
          await call('GET', '/v1/portal/account', { headers: bearer(token) }),
          401,
          'authentication_required',
        );

        // Expired: 401 from expires_at (test clock).
        const short = await call('POST', `/v1/accounts/${ann}/portal_sessions`, {
          body: { ttl_seconds: 60, scopes: ['topup', 'read'], return_url: 'https://acme.test/back' },
        });
        assert.equal(short.status, 201, short.text);
        assert.deepEqual(short.body.data.scopes, ['read', 'topup']);
        const shortToken = short.body.data.url.split('#')[1];
        assert.equal((await call('GET', '/v1/portal/account', { headers: bearer(shortToken) })).status, 200);
        const adv = await call('POST', '/v1/test_clock/advance', { body: { seconds: 60 } });
        assert.equal(adv.status, 200, adv.text);
        assertError(
          await call('GET', '/v1/portal/account', { headers: bearer(shortToken) }),
          401,
          'authentication_required',
        );

        // Bad input, and accounts that are not the company's.
        const bad: [unknown, string][] = [
          [{ scopes: ['admin'] }, 'scopes/0'],
          [{ scopes: [] }, 'scopes'],
          [{ ttl_seconds: 59 }, 'ttl_seconds'],
          [{ ttl_seconds: 86_401 }, 'ttl_seconds'],
          [{ return_url: 'http://acme.test/back' }, 'return_url'],
          [{ return_url: 'not a url' }, 'return_url'],
          [{ frame_ancestors: ['https://acme.test/path'] }, 'frame_ancestors[0]'],
          [{ frame_ancestors: ['https://ok.test', 'ftp://acme.test'] }, 'frame_ancestors[1]'],
        ];
        for (const [body, param] of bad) {
          const r = await call('POST', `/v1/accounts/${ann}/portal_sessions`, { body });
          assertError(r, 400, 'invalid_request');
          assert.ok(
            r.body.error.param === param || r.body.error.param?.replace(/\[(\d+)\]/g, '/$1') === param,
            `${JSON.stringify(body)}: ${r.text}`,
          );
        }
        const framed = await call('POST', `/v1/accounts/${ann}/portal_sessions`, {
          body: { frame_ancestors: ['http://localhost:3000', 'https://app.acme.test/'] },
        });
        assert.deepEqual(framed.body.data.frame_ancestors, ['http://localhost:3000', 'https://app.acme.test']);
        for (const id of [cy, 'a_missing']) {
          const r = await call('POST', `/v1/accounts/${id}/portal_sessions`, { body: {} });
          assertError(r, 404, 'not_found');
          assert.equal(r.body.error.param, 'account_id');
        }
        await h.audit();
      } finally {
        await h.close();
      }
    });
  });
}
