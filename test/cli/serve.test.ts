// Guarantee: `billing serve` is the server (as `node dist/main.js` runs it): it listens, answers
// /healthz, accepts the API key that `billing company create` printed, stops accepting it once
// `billing key revoke` revoked it, and exits 0 on SIGTERM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { CLI_ENTRY, billing, freshDatabase, nodeArgs } from './support.js';
import { childEnv } from '../support/child-env.js';

test('billing serve serves the API to a company the CLI created, and stops on SIGTERM', async (t) => {
  const db = await freshDatabase('sqlite');
  t.after(() => db.drop());
  const env = { DATABASE_URL: db.url };
  assert.equal(
    (await billing(['user', 'create', '--email', 'ops@example.com', '--name', 'Ops'], env, 'a long password\n')).code,
    0,
  );
  const made = await billing(['company', 'create', '--owner-email', 'ops@example.com', '--name', 'Ops', '--json'], env);
  const { company_id: companyId, api_key: apiKey } = JSON.parse(made.stdout) as { company_id: string; api_key: string };

  const server = spawn(process.execPath, await nodeArgs(CLI_ENTRY, ['serve']), {
    env: childEnv({ ...env, PORT: '0', BILLING_API_KEY_CACHE_MS: '0', LOG_LEVEL: 'fatal' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => server.kill('SIGKILL'));
  let stderr = '';
  server.stderr.on('data', (d) => {
    stderr += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    server.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  const auth = { authorization: `Basic ${Buffer.from(`${companyId}:${apiKey}`).toString('base64')}` };
  assert.equal((await fetch(`${url}/healthz`)).status, 200);
  assert.equal((await fetch(`${url}/v1/accounts`, { headers: auth })).status, 200);

  const keys = JSON.parse((await billing(['key', 'list', '--company', companyId, '--json'], env)).stdout);
  assert.equal((await billing(['key', 'revoke', '--company', companyId, '--key-id', keys[0].key_id], env)).code, 0);
  assert.equal((await fetch(`${url}/v1/accounts`, { headers: auth })).status, 401);

  server.kill('SIGTERM');
  const [code] = await once(server, 'exit');
  assert.equal(code, 0, stderr);
});
