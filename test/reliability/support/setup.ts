/** Companies, accounts and balances through the public API of a (child) server. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { send } from './http.js';

export interface Company {
  email: string;
  password: string;
  userId: number;
  companyId: string;
  apiKey: string;
  auth: [string, string];
}

export async function signUp(url: string, name = 'Acme'): Promise<Company> {
  const email = `rel-${randomBytes(5).toString('hex')}@example.com`;
  const password = `correct horse ${randomBytes(4).toString('hex')}`;
  const u = await send(url, { method: 'POST', path: '/v1/users', body: { name: 'Ada', email, password } });
  assert.equal(u.status, 200, u.text);
  const c = await send(url, { method: 'POST', path: '/v1/companies', auth: [email, password], body: { name } });
  assert.equal(c.status, 200, c.text);
  const { company_id: companyId, api_key: apiKey } = c.json.data;
  return { email, password, userId: u.json.id, companyId, apiKey, auth: [companyId, apiKey] };
}

export async function account(url: string, co: Company, denomination = 'tokens', amount = 1_000_000): Promise<string> {
  const a = await send(url, {
    method: 'POST',
    path: `/v1/companies/${co.companyId}/accounts`,
    auth: co.auth,
    body: { name: 'Bob' },
  });
  assert.equal(a.status, 200, a.text);
  const id: string = a.json.data.account_id;
  const b = await send(url, {
    method: 'POST',
    path: `/v1/accounts/${id}/balance/${denomination}`,
    auth: co.auth,
    body: { amount },
  });
  assert.equal(b.status, 200, b.text);
  return id;
}

export async function balanceOf(url: string, co: Company, accountId: string, denomination = 'tokens') {
  const b = await send(url, {
    method: 'GET',
    path: `/v1/accounts/${accountId}/balance/${denomination}`,
    auth: co.auth,
  });
  assert.equal(b.status, 200, b.text);
  return b.json.data as { amount: number; pending: number; available: number };
}
