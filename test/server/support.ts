/**
 * The server as production runs it: `node dist/main.js` in a child process (support/built.ts), configured by
 * its environment only, on a database of either dialect (test/cli/support.ts freshDatabase).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { SERVER_ENTRY, nodeArgs } from '../cli/support.js';
import { TEST_SECRET_KEY } from '../support/stores.js';
import { childEnv } from '../support/child-env.js';

export interface Child {
  proc: ChildProcess;
  url: string;
  /** Everything the process wrote so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/**
 * Starts the server; resolves with its URL once it listens ready (`until: 'ready'`, the default), or
 * as soon as its port is open and it answers as a starting server (`'starting'`).
 */
export async function startChild(
  env: Record<string, string>,
  { until = 'ready' }: { until?: 'ready' | 'starting' } = {},
): Promise<Child> {
  const proc = spawn(process.execPath, await nodeArgs(SERVER_ENTRY), {
    env: childEnv({ PORT: '0', LOG_LEVEL: 'fatal', BILLING_SECRET_KEY: TEST_SECRET_KEY, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d) => {
    out += d;
  });
  proc.stderr!.on('data', (d) => {
    err += d;
  });
  const exited = once(proc, 'exit').then(([code]) => code as number | null);
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const m = (until === 'ready' ? /listening on (http:\/\/\S+)/ : /starting on (http:\/\/\S+)/).exec(out);
      if (m) {
        proc.stdout!.off('data', onData);
        resolve(m[1]!);
      }
    };
    proc.stdout!.on('data', onData);
    void exited.then((code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
  return { proc, url, stdout: () => out, stderr: () => err, exited };
}

export function basic(user: string, secret: string): string {
  return `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;
}

/** A user, a company and one account funded with `amount` tokens, through the public API. */
export async function fundedAccount(
  url: string,
  amount: number,
): Promise<{ companyId: string; apiKey: string; accountId: string; auth: string }> {
  const email = `ops-${Math.random().toString(16).slice(2)}@example.com`;
  const password = 'correct horse battery';
  const json = { 'content-type': 'application/json' };
  const u = await fetch(`${url}/v1/users`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ name: 'Ops', email, password }),
  });
  if (u.status !== 200) throw new Error(`sign-up: ${u.status} ${await u.text()}`);
  const c = await fetch(`${url}/v1/companies`, {
    method: 'POST',
    headers: { ...json, authorization: basic(email, password) },
    body: JSON.stringify({ name: 'Ops' }),
  });
  const company = ((await c.json()) as { data: { company_id: string; api_key: string } }).data;
  const auth = basic(company.company_id, company.api_key);
  const a = await fetch(`${url}/v1/companies/${company.company_id}/accounts`, {
    method: 'POST',
    headers: { ...json, authorization: auth },
    body: JSON.stringify({ name: 'Bob' }),
  });
  const accountId = ((await a.json()) as { data: { account_id: string } }).data.account_id;
  const b = await fetch(`${url}/v1/accounts/${accountId}/balance/tokens`, {
    method: 'POST',
    headers: { ...json, authorization: auth },
    body: JSON.stringify({ amount }),
  });
  if (b.status !== 200) throw new Error(`balance: ${b.status} ${await b.text()}`);
  return { companyId: company.company_id, apiKey: company.api_key, accountId, auth };
}
