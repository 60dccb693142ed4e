// Guarantee: the operator CLI does each job against a real database of either dialect, in a real
// child process: users, companies and keys through the same operations as the API (a secret shown
// once, by `company create` and `key create` only); `audit` exits non-zero listing every balance
// whose transactions disagree, 0 on an exact ledger; `backup` copies SQLite online and sends
// PostgreSQL to pg_dump; wrong usage exits 2 with the usage; an unreachable database is one line.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { sha256Hex } from '../../src/lib/canonical.js';
import { openStore } from '../../src/store/open.js';
import { TEST_SECRET_KEY, seedAccount, seedBalance } from '../support/stores.js';
import { run } from '../../src/cli/run.js';
import { CLI_DIALECTS, type Ran, STACK_LINE, type TestDatabase, billing, freshDatabase } from './support.js';

const PASSWORD = 'correct horse battery';

describe('billing CLI commands', { concurrency: true }, () => {
  for (const dialect of CLI_DIALECTS) {
    describe(`on ${dialect}`, { concurrency: false }, () => {
      let db: TestDatabase;
      let env: Record<string, string>;
      before(async () => {
        db = await freshDatabase(dialect);
        env = { DATABASE_URL: db.url, BILLING_DB_CONNECT_TIMEOUT_MS: '0', BILLING_SECRET_KEY: TEST_SECRET_KEY };
      });
      after(async () => {
        await db.drop();
      });

      /** A user and a company made by the CLI; the company's first key. */
      async function company(email: string): Promise<{ companyId: string; apiKey: string }> {
        const u = await billing(['user', 'create', '--email', email, '--name', 'Ada Lovelace'], env, `${PASSWORD}\n`);
        assert.equal(u.code, 0, u.stderr);
        const c = await billing(['company', 'create', '--owner-email', email, '--name', 'Acme', '--json'], env);
        assert.equal(c.code, 0, c.stderr);
        const body = JSON.parse(c.stdout) as { company_id: string; api_key: string; processor: string };
        assert.equal(body.processor, 'sandbox');
        return { companyId: body.company_id, apiKey: body.api_key };
      }

      test('migrate creates the schema and says so', async () => {
        const r = await billing(['migrate'], env);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`database schema up to date: .* \\(${dialect}\\)`));
        const tables = await db.sql(
          dialect === 'sqlite'
            ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'balances'"
            : "SELECT table_name AS name FROM information_schema.tables WHERE table_name = 'balances'",
        );
        assert.equal(tables.length, 1);
      });

      test('user create takes the password from standard input, BILLING_USER_PASSWORD or --password', async () => {
        const fromStdin = await billing(
          ['user', 'create', '--email', 'Stdin@Example.com', '--name', 'Ada Lovelace'],
          env,
          `${PASSWORD}\n`,
        );
        assert.equal(fromStdin.code, 0, fromStdin.stderr);
        assert.match(fromStdin.stdout, /^user \d+ created: stdin@example\.com\n$/);
        const fromEnv = await billing(['user', 'create', '--email', 'env@example.com', '--name', 'Bob', '--json'], {
          ...env,
          BILLING_USER_PASSWORD: PASSWORD,
        });
        assert.equal(fromEnv.code, 0, fromEnv.stderr);
        assert.deepEqual(Object.keys(JSON.parse(fromEnv.stdout)), ['user_id', 'email', 'name']);
        const fromFlag = await billing(
          ['user', 'create', '--email', 'flag@example.com', '--name', 'Cy', '--password', PASSWORD],
          env,
        );
        assert.equal(fromFlag.code, 0, fromFlag.stderr);
        for (const r of [fromStdin, fromEnv, fromFlag]) assert.ok(!(r.stdout + r.stderr).includes(PASSWORD));
        // The password was stored as a hash that verifies (the same sign-up operation as the API).
        const rows = await db.sql('SELECT password_hash FROM users WHERE email = ?', ['stdin@example.com']);
        assert.equal(rows.length, 1);
        assert.ok(!String(rows[0]!.password_hash).includes(PASSWORD));
      });

      test('user create refuses a duplicate email, a short password, no password (one line each)', async () => {
        const dup = await billing(
          ['user', 'create', '--email', 'stdin@example.com', '--name', 'Again', '--password', PASSWORD],
          env,
        );
        assert.equal(dup.code, 1);
        assert.equal(dup.stderr, 'billing: a user with this email already exists\n');
        const short = await billing(['user', 'create', '--email', 's@example.com', '--name', 'S'], env, 'short\n');
        assert.equal(short.code, 1);
        assert.equal(short.stderr, 'billing: password must be at least 8 characters\n');
        const none = await billing(['user', 'create', '--email', 'n@example.com', '--name', 'N'], env, '');
        assert.equal(none.code, 2);
        assert.match(none.stderr, /^billing: no password: give --password, set BILLING_USER_PASSWORD/);
        const badEmail = await billing(['user', 'create', '--email', 'not-an-email', '--name', 'N'], env, PASSWORD);
        assert.equal(badEmail.code, 2);
        assert.match(badEmail.stderr, /--email must be an e-mail address/);
      });

      test('company create prints the company id and a working API key, once', async () => {
        const email = 'owner@example.com';
        await billing(['user', 'create', '--email', email, '--name', 'Owner'], env, `${PASSWORD}\n`);
        const r = await billing(['company', 'create', '--owner-email', 'OWNER@example.com', '--name', 'Acme'], env);
        assert.equal(r.code, 0, r.stderr);
        const m = /^company_id {2}(c_\w+)\napi_key {5}(sk_\w+)\n$/.exec(r.stdout);
        assert.ok(m, r.stdout);
        assert.match(r.stderr, /shown only now/);
        const [, companyId, apiKey] = m;
        // The key is stored only as its digest, for that company, and not revoked.
        const keys = await db.sql('SELECT company_id, revoked_at FROM api_keys WHERE digest = ?', [sha256Hex(apiKey!)]);
        assert.deepEqual(
          keys.map((k) => [k.company_id, k.revoked_at]),
          [[companyId, null]],
        );
        const owners = await db.sql('SELECT role FROM company_members WHERE company_id = ?', [companyId]);
        assert.deepEqual(
          owners.map((o) => o.role),
          ['owner'],
        );
      });

      test('company create refuses an unknown owner, a bad processor, stripe without a key', async () => {
        const owner = ['user', 'create', '--email', 'owner2@example.com', '--name', 'Owner', '--password', PASSWORD];
        assert.equal((await billing(owner, env)).code, 0);
        const unknown = await billing(['company', 'create', '--owner-email', 'nobody@example.com', '--name', 'X'], env);
        assert.equal(unknown.code, 1);
        assert.match(unknown.stderr, /^billing: no user with the email nobody@example\.com/);
        assert.equal(unknown.stderr.trim().split('\n').length, 1);
        const paypal = await billing(
          ['company', 'create', '--owner-email', 'owner2@example.com', '--name', 'X', '--processor', 'paypal'],
          env,
        );
        assert.equal(paypal.code, 2);
        assert.match(paypal.stderr, /--processor must be sandbox or stripe, got "paypal"/);
        const stripe = await billing(
          ['company', 'create', '--owner-email', 'owner2@example.com', '--name', 'X', '--processor', 'stripe'],
          env,
        );
        assert.equal(stripe.code, 1);
        assert.match(stripe.stderr, /^billing: processor "stripe" needs processor_api_key/);
        const stripeFromEnv = await billing(
          [
            'company',
            'create',
            '--owner-email',
            'owner2@example.com',
            '--name',
            'S',
            '--processor',
            'stripe',
            '--json',
          ],
          { ...env, BILLING_PROCESSOR_API_KEY: 'rk_test_cli' },
        );
        assert.equal(stripeFromEnv.code, 0, stripeFromEnv.stderr);
        assert.equal(JSON.parse(stripeFromEnv.stdout).processor, 'stripe');
        assert.ok(!stripeFromEnv.stdout.includes('rk_test_cli'));
      });

      test('key create, list (no secrets) and revoke', async () => {
        const { companyId, apiKey: first } = await company('keys@example.com');
        const created = await billing(['key', 'create', '--company', companyId], env);
        assert.equal(created.code, 0, created.stderr);
        const m = /^key_id {3}(key_\w+)\napi_key {2}(sk_\w+)\n$/.exec(created.stdout);
        assert.ok(m, created.stdout);
        const [, keyId, second] = m;
        const list = await billing(['key', 'list', '--company', companyId], env);
        assert.equal(list.code, 0, list.stderr);
        const lines = list.stdout.trimEnd().split('\n');
        assert.match(lines[0]!, /^key_id\s+prefix\s+created_at\s+last_used_at\s+revoked_at$/);
        assert.equal(lines.length, 3);
        for (const secret of [first, second!]) assert.ok(!list.stdout.includes(secret));
        assert.ok(list.stdout.includes(`${second!.slice(0, 7)}…`));

        const revoked = await billing(['key', 'revoke', '--company', companyId, '--key-id', keyId!], env);
        assert.equal(revoked.code, 0, revoked.stderr);
        assert.equal(revoked.stdout, `key ${keyId} revoked\n`);
        const listed = await billing(['key', 'list', '--company', companyId, '--json'], env);
        const keys = JSON.parse(listed.stdout) as { key_id: string; revoked_at: string | null }[];
        assert.equal(keys.length, 2);
        assert.notEqual(keys.find((k) => k.key_id === keyId)!.revoked_at, null);
        assert.equal(keys.find((k) => k.key_id !== keyId)!.revoked_at, null);

        const again = await billing(['key', 'revoke', '--company', companyId, '--key-id', keyId!], env);
        assert.equal(again.code, 1);
        assert.equal(again.stderr, 'billing: no such active API key\n');
        const noCompany = await billing(['key', 'create', '--company', 'c_nope'], env);
        assert.equal(noCompany.code, 1);
        assert.equal(noCompany.stderr, 'billing: no company c_nope\n');
        assert.equal(noCompany.stdout, '');
      });

      test('audit exits 0 on an exact ledger and 3 listing every balance a raw UPDATE broke', async () => {
        const { companyId } = await company('audit@example.com');
        const store = await openStore(db.url);
        const accounts: string[] = [];
        try {
          for (let i = 0; i < 3; i++) {
            const accountId = await seedAccount(store, companyId);
            await seedBalance(store, companyId, accountId, 'tokens', 100);
            accounts.push(accountId);
          }
        } finally {
          await store.close();
        }
        const clean = await billing(['audit'], env);
        assert.equal(clean.code, 0, clean.stderr);
        assert.match(clean.stdout, /^ledger audit: exact/);

        await db.sql("UPDATE balances SET amount = amount + 7 WHERE account_id = ? AND denomination = 'tokens'", [
          accounts[0],
        ]);
        await db.sql("UPDATE balances SET amount = amount - 1 WHERE account_id = ? AND denomination = 'tokens'", [
          accounts[2],
        ]);
        const broken = await billing(['audit'], env);
        assert.equal(broken.code, 3, broken.stderr);
        // Each broken amount breaks the ledger (Σ transactions) and the grants that hold it.
        assert.match(broken.stdout, /^ledger audit: 4 problem\(s\) in 2 balance\(s\)\n/);
        assert.ok(broken.stdout.includes(`${accounts[0]}  tokens  amount 107 exceeds Σ remaining 100`), broken.stdout);
        assert.match(
          broken.stdout,
          new RegExp(`${accounts[2]}  tokens  grant g_\\w+ has unheld units while the balance owes 1`),
        );
        assert.ok(
          broken.stdout.includes(`${accounts[0]}  tokens  amount 107 ≠ sum of transactions 100`),
          broken.stdout,
        );
        assert.ok(broken.stdout.includes(`${accounts[2]}  tokens  amount 99 ≠ sum of transactions 100`), broken.stdout);
        assert.ok(!broken.stdout.includes(accounts[1]!));
        const json = await billing(['audit', '--json'], env);
        assert.equal(json.code, 3);
        const body = JSON.parse(json.stdout) as { ok: boolean; problems: { account_id: string }[] };
        assert.equal(body.ok, false);
        assert.deepEqual(
          [...new Set(body.problems.map((p) => p.account_id))].sort(),
          [accounts[0], accounts[2]].sort(),
        );
        // Put it back: the other tests share this database.
        await db.sql('UPDATE balances SET amount = 100 WHERE account_id IN (?, ?)', [accounts[0], accounts[2]]);
        assert.equal((await billing(['audit'], env)).code, 0);
      });

      test('backup: an online copy of SQLite, never over a file; PostgreSQL is sent to pg_dump', async (t) => {
        if (dialect === 'postgres') {
          const r = await billing(['backup', '/tmp/never-written.sqlite'], env);
          assert.equal(r.code, 1);
          assert.match(r.stderr, /use pg_dump/);
          assert.ok(!existsSync('/tmp/never-written.sqlite'));
          return;
        }
        const file = db.url.slice('sqlite:'.length);
        const target = join(file, '..', 'copy.sqlite');
        const r = await billing(['backup', target], env);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /^backed up .* to .*copy\.sqlite \(\d+ pages, \d+ bytes\)\n$/);
        const copy = new Database(target, { readonly: true });
        t.after(() => copy.close());
        const users = copy.prepare('SELECT email FROM users ORDER BY email').all() as { email: string }[];
        assert.ok(users.some((u) => u.email === 'stdin@example.com'));
        const twice = await billing(['backup', target], env);
        assert.equal(twice.code, 1);
        assert.match(twice.stderr, /already exists: a backup never overwrites a file/);
        const memory = await billing(['backup', join(file, '..', 'm.sqlite')], { DATABASE_URL: 'sqlite::memory:' });
        assert.equal(memory.code, 1);
        assert.match(memory.stderr, /in memory/);
      });
    });
  }
});

/** `run` in this process, for the many cases of wrong usage (the child-process cases prove the wiring). */
async function inProcess(args: string[]): Promise<Ran> {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    env: { DATABASE_URL: 'sqlite::memory:' },
    out: (line) => {
      stdout += `${line}\n`;
    },
    err: (line) => {
      stderr += `${line}\n`;
    },
    readStdin: async () => undefined,
  });
  return { code, stdout, stderr };
}

describe('billing CLI: usage', { concurrency: true }, () => {
  const env = { DATABASE_URL: 'sqlite::memory:' };
  for (const [args, why, child] of [
    [[], 'no command', true],
    [['frobnicate'], 'an unknown command', true],
    [['user', 'create', '--email', 'a@b.co', '--nmae', 'x'], 'an unknown flag', true],
    [['user', 'delete'], 'an unknown subcommand', false],
    [['company', 'create', '--name', 'Acme'], 'a missing required flag', false],
    [['key', 'list'], 'a missing --company', false],
    [['key', 'list', '--company'], 'a flag without its value', false],
    [['key', 'revoke', '--company', 'c_1', '--json'], 'a flag the subcommand does not take', false],
    [['backup'], 'a missing file', false],
    [['backup', 'a', 'b'], 'an extra argument', false],
    [['audit', 'now'], 'a stray argument', false],
    [['migrate', '--json'], 'a flag the command does not take', false],
    [['serve', '--port', '80'], 'a setting given as a flag', false],
  ] as [string[], string, boolean][]) {
    test(`${why} prints the usage and exits 2${child ? ' (child process)' : ''}`, async () => {
      const r = child ? await billing(args, env) : await inProcess(args);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^billing: .+\n\nUsage: billing /);
      assert.equal(r.stdout, '');
      assert.doesNotMatch(r.stderr, STACK_LINE);
    });
  }

  test('--help prints the usage to stdout and exits 0; --version prints the version', async () => {
    const help = await billing(['--help'], env);
    assert.equal(help.code, 0);
    for (const command of ['serve', 'migrate', 'user create', 'company create', 'key create', 'audit', 'backup'])
      assert.ok(help.stdout.includes(`billing ${command}`), command);
    const sub = await inProcess(['key', 'revoke', '--help']);
    assert.equal(sub.code, 0);
    assert.match(sub.stdout, /revoke: the key stops working at once/);
    const version = await inProcess(['--version']);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  });
});

describe('billing CLI: a database it cannot use', { concurrency: true }, () => {
  test('an unreachable PostgreSQL is one line, exit 1, no stack, no password', async () => {
    const r = await billing(['migrate'], {
      DATABASE_URL: 'postgres://billing:s3cret@127.0.0.1:1/billing',
      BILLING_DB_CONNECT_TIMEOUT_MS: '0',
    });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      'billing: cannot reach the PostgreSQL database postgres://billing:***@127.0.0.1:1/billing: ' +
        'connect ECONNREFUSED 127.0.0.1:1\n',
    );
  });

  test('within BILLING_DB_CONNECT_TIMEOUT_MS it retries, one line per attempt, then gives up in one line', async () => {
    const r = await billing(['audit'], {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/billing',
      BILLING_DB_CONNECT_TIMEOUT_MS: '1200',
    });
    assert.equal(r.code, 1);
    const lines = r.stderr.trimEnd().split('\n');
    assert.ok(lines.length >= 3, r.stderr);
    // Each attempt counts down from the configured 1.2 s (not from a default), and the last one gives up.
    for (const line of lines.slice(0, -1))
      assert.match(line, /^billing: database .* not reachable \(connect ECONNREFUSED.*, giving up in [12] s$/);
    assert.match(lines.at(-1)!, /^billing: cannot reach the PostgreSQL database .* after \d+ attempts in 1 s: /);
    assert.doesNotMatch(r.stderr, STACK_LINE);
  });

  test('a SQLite file that is not a database is one line, exit 1', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'billing-cli-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'notes.sqlite');
    writeFileSync(file, 'not a database, only words '.repeat(100));
    const r = await billing(['migrate'], { DATABASE_URL: `sqlite:${file}` });
    assert.equal(r.stdout, '');
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `billing: cannot open the SQLite database ${file}: file is not a database (SQLITE_NOTADB)\n`,
    );
  });
});
