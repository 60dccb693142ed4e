// Guarantee: BILLING_SIGNUP=closed turns open sign-up off: POST /v1/users and POST /v1/companies
// answer 403 with the error envelope (type forbidden) and create nothing; the rest of the API,
// for users and companies an operator made, works as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeDeps } from '../../src/compose.js';
import { loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/lib/clock.js';
import { createCompany, signUp } from '../../src/operations/identity.js';
import { processorFactory } from '../../src/processors/index.js';
import { type Harness, startHarness } from '../support/harness.js';
import { testSecretBox } from '../support/stores.js';

const composeDepsFor = (h: Harness) =>
  composeDeps(loadConfig({}), h.store, systemClock, processorFactory(), testSecretBox());

test('BILLING_SIGNUP=closed: sign-up and company registration answer 403 forbidden', async (t) => {
  const h = await startHarness('sqlite', { BILLING_SIGNUP: 'closed' });
  t.after(() => h.close());
  const deps = composeDepsFor(h);

  const user = await h.request('POST', '/v1/users', {
    body: { name: 'Eve', email: 'eve@example.com', password: 'correct horse' },
  });
  assert.equal(user.status, 403, user.text);
  assert.equal(user.body.error.type, 'forbidden');
  assert.equal(user.body.error.code, 'signup_closed');
  assert.equal(await h.store.read((tx) => tx.identity.findUserByEmail('eve@example.com')), undefined);

  // A user the operator created (billing user create) may not register companies over HTTP either.
  const ada = await deps.store.write(
    await signUp(deps, { name: 'Ada', email: 'ada@example.com', password: 'correct horse' }),
  );
  const company = await h.request('POST', '/v1/companies', {
    auth: ['ada@example.com', 'correct horse'],
    body: { name: 'Acme' },
  });
  assert.equal(company.status, 403, company.text);
  assert.equal(company.body.error.type, 'forbidden');
  const anonymous = await h.request('POST', '/v1/companies', { body: { name: 'Acme' } });
  assert.equal(anonymous.status, 401);

  // A company the operator created (billing company create) works as usual.
  const made = await deps.store.write(await createCompany(deps, ada, { name: 'Acme' }));
  const accounts = await h.request('GET', '/v1/accounts', { auth: [made.company.companyId, made.apiKey] });
  assert.equal(accounts.status, 200, accounts.text);
  const key = await h.request('POST', `/v1/companies/${made.company.companyId}/api_keys`, {
    auth: ['ada@example.com', 'correct horse'],
  });
  assert.equal(key.status, 200, key.text);
});

test('BILLING_SIGNUP=open (the default) lets anyone sign up', async (t) => {
  const h = await startHarness('sqlite');
  t.after(() => h.close());
  const user = await h.request('POST', '/v1/users', {
    body: { name: 'Eve', email: 'eve@example.com', password: 'correct horse' },
  });
  assert.equal(user.status, 200, user.text);
});
