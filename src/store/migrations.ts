/**
 * Schema migrations, one list for both databases. Each step has the SQL of each dialect; the
 * differences are kept to types (identity columns, booleans, doubles). Applied at start, in
 * order, each once (recorded in schema_migrations).
 *
 * Money and units are BIGINT (exact integers); timestamps are BIGINT epoch milliseconds taken
 * from the injected clock, so the test clock governs stored times too.
 */
export interface Migration {
  id: number;
  name: string;
  sqlite: string;
  postgres: string;
}

function both(sql: string, dialect: 'sqlite' | 'postgres'): string {
  if (dialect === 'sqlite') {
    return sql
      .replaceAll('{{SEQ}}', 'INTEGER PRIMARY KEY')
      .replaceAll('{{BOOL}}', 'INTEGER')
      .replaceAll('{{DOUBLE}}', 'REAL')
      .replaceAll('{{DECIMAL}}', 'TEXT')
      .replaceAll('{{SEQ_IN_INDEX}}', '');
  }
  return sql
    .replaceAll('{{SEQ}}', 'BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY')
    .replaceAll('{{BOOL}}', 'BOOLEAN')
    .replaceAll('{{DOUBLE}}', 'DOUBLE PRECISION')
    .replaceAll('{{DECIMAL}}', 'NUMERIC')
    .replaceAll('{{SEQ_IN_INDEX}}', ', seq');
}

const CORE = `
CREATE TABLE users (
  id {{SEQ}},
  name TEXT NOT NULL,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  date_of_birth TEXT,
  email_verified {{BOOL}} NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE TABLE companies (
  company_id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  owner_user_id BIGINT NOT NULL REFERENCES users(id),
  processor TEXT NOT NULL,
  processor_api_key TEXT,
  created_at BIGINT NOT NULL
);
CREATE TABLE company_members (
  company_id TEXT NOT NULL REFERENCES companies(company_id),
  user_id BIGINT NOT NULL REFERENCES users(id),
  role TEXT NOT NULL,
  PRIMARY KEY (company_id, user_id)
);
CREATE TABLE api_keys (
  key_id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies(company_id),
  digest TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX api_keys_company ON api_keys (company_id, created_at);
CREATE TABLE accounts (
  seq {{SEQ}},
  account_id TEXT NOT NULL UNIQUE,
  company_id TEXT NOT NULL REFERENCES companies(company_id),
  name TEXT,
  email TEXT,
  metadata TEXT,
  processor_id TEXT,
  plan_id TEXT,
  created_at BIGINT NOT NULL
);
CREATE INDEX accounts_company ON accounts (company_id, seq);
CREATE TABLE balances (
  account_id TEXT NOT NULL REFERENCES accounts(account_id),
  denomination TEXT NOT NULL,
  company_id TEXT NOT NULL,
  amount BIGINT NOT NULL,
  pending BIGINT NOT NULL,
  refill_threshold BIGINT,
  refill_amount BIGINT,
  refill_usd_amount BIGINT,
  refill_on_day TEXT,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (account_id, denomination)
);
CREATE TABLE prices (
  company_id TEXT NOT NULL REFERENCES companies(company_id),
  type TEXT NOT NULL,
  denomination TEXT NOT NULL,
  unit_amount TEXT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (company_id, type)
);
CREATE TABLE events (
  seq {{SEQ}},
  company_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  client_supplied {{BOOL}} NOT NULL,
  type TEXT NOT NULL,
  quantity {{DOUBLE}} NOT NULL,
  cost_amount BIGINT NOT NULL,
  denomination TEXT NOT NULL,
  metadata TEXT,
  state TEXT NOT NULL,
  content_hash TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  expires_at BIGINT
);
CREATE UNIQUE INDEX events_company_event ON events (company_id, event_id);
CREATE INDEX events_pending_expiry ON events (expires_at) WHERE state = 'pending';
CREATE INDEX events_pending_balance ON events (account_id, denomination, expires_at) WHERE state = 'pending';
CREATE TABLE transactions (
  seq {{SEQ}},
  transaction_id TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL,
  denomination TEXT NOT NULL,
  amount BIGINT NOT NULL,
  balance_after BIGINT NOT NULL,
  kind TEXT NOT NULL,
  event_id TEXT,
  reason TEXT,
  created_at BIGINT NOT NULL
);
CREATE INDEX transactions_account ON transactions (account_id, seq);
CREATE INDEX transactions_balance ON transactions (account_id, denomination, seq);
CREATE TABLE outbox (
  seq {{SEQ}},
  outbox_id TEXT NOT NULL UNIQUE,
  company_id TEXT NOT NULL,
  topic TEXT NOT NULL,
  payload TEXT NOT NULL,
  run_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  claimed_until BIGINT,
  done_at BIGINT,
  last_error TEXT
);
CREATE INDEX outbox_due ON outbox (run_at) WHERE done_at IS NULL;
CREATE TABLE idempotency_keys (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  status_code INTEGER,
  response_body TEXT,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_created ON idempotency_keys (created_at);
`;

// Money movement: cards, refill state on balances, charges, plans and plan periods.
const MONEY = `
ALTER TABLE balances ADD COLUMN refill_monthly {{BOOL}} NOT NULL DEFAULT {{FALSE}};
ALTER TABLE balances ADD COLUMN monthly_anchor_at BIGINT;
ALTER TABLE balances ADD COLUMN next_refill_at BIGINT;
ALTER TABLE balances ADD COLUMN refill_charge_id TEXT;
ALTER TABLE balances ADD COLUMN consecutive_declines INTEGER NOT NULL DEFAULT 0;
ALTER TABLE balances ADD COLUMN auto_refill_paused {{BOOL}} NOT NULL DEFAULT {{FALSE}};
ALTER TABLE balances ADD COLUMN plan_included BIGINT;
ALTER TABLE balances ADD COLUMN plan_alert_percentage TEXT;
ALTER TABLE balances ADD COLUMN plan_alerted {{BOOL}} NOT NULL DEFAULT {{FALSE}};
CREATE INDEX balances_monthly_due ON balances (next_refill_at) WHERE next_refill_at IS NOT NULL;
CREATE TABLE cards (
  account_id TEXT PRIMARY KEY REFERENCES accounts(account_id),
  company_id TEXT NOT NULL,
  payment_method_id TEXT NOT NULL,
  brand TEXT NOT NULL,
  last4 TEXT NOT NULL,
  exp_month INTEGER NOT NULL,
  exp_year INTEGER NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE TABLE charges (
  seq {{SEQ}},
  charge_id TEXT NOT NULL UNIQUE,
  company_id TEXT NOT NULL,
  account_id TEXT NOT NULL REFERENCES accounts(account_id),
  denomination TEXT,
  reason TEXT NOT NULL,
  usd_cents BIGINT NOT NULL,
  status TEXT NOT NULL,
  processor_ref TEXT,
  failure_code TEXT,
  failure_message TEXT,
  details TEXT NOT NULL,
  transaction_id TEXT,
  outbox_id TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX charges_account ON charges (account_id, seq);
CREATE INDEX charges_account_status ON charges (account_id, status);
CREATE INDEX charges_transaction ON charges (transaction_id) WHERE transaction_id IS NOT NULL;
CREATE TABLE plans (
  seq {{SEQ}},
  plan_id TEXT NOT NULL UNIQUE,
  company_id TEXT NOT NULL REFERENCES companies(company_id),
  name TEXT NOT NULL,
  charge_amount BIGINT NOT NULL,
  billing_period TEXT NOT NULL,
  overage_charge_mode TEXT NOT NULL,
  threshold_alert_percentage TEXT,
  rollover {{BOOL}} NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX plans_company ON plans (company_id, seq);
CREATE TABLE plan_balances (
  plan_id TEXT NOT NULL REFERENCES plans(plan_id),
  position INTEGER NOT NULL,
  denomination TEXT NOT NULL,
  amount BIGINT NOT NULL,
  overage_charge_amount BIGINT NOT NULL,
  PRIMARY KEY (plan_id, position)
);
CREATE TABLE account_plans (
  account_id TEXT PRIMARY KEY REFERENCES accounts(account_id),
  company_id TEXT NOT NULL,
  plan_id TEXT NOT NULL REFERENCES plans(plan_id),
  anchor_at BIGINT NOT NULL,
  period_start BIGINT NOT NULL,
  next_renewal_at BIGINT NOT NULL
);
CREATE INDEX account_plans_due ON account_plans (next_renewal_at);
`;

function money(dialect: 'sqlite' | 'postgres'): string {
  return both(MONEY, dialect).replaceAll('{{FALSE}}', dialect === 'sqlite' ? '0' : 'FALSE');
}

export const MIGRATIONS: Migration[] = [
  { id: 1, name: 'core ledger', sqlite: both(CORE, 'sqlite'), postgres: both(CORE, 'postgres') },
  { id: 2, name: 'money movement', sqlite: money('sqlite'), postgres: money('postgres') },
];

// --- webhooks (migration 3; id 2 belongs to money movement)
/**
 * Subscriptions are soft-deleted (`deleted_at`) so the deliveries already written for them can
 * be closed out by the worker. One delivery row per notification and subscription: its
 * `callback_id` is the `webhook-id` of every attempt. `next_attempt_at` is on the injected
 * clock (the test clock drives retries); `claimed_until` is on the WALL clock, because a lease
 * guards a real network attempt whose 10 s timeout is real time too.
 */
const WEBHOOKS = `
CREATE TABLE webhook_subscriptions (
  seq {{SEQ}},
  webhook_id TEXT NOT NULL UNIQUE,
  company_id TEXT NOT NULL REFERENCES companies(company_id),
  type TEXT NOT NULL,
  url TEXT NOT NULL,
  threshold BIGINT,
  secret TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  deleted_at BIGINT,
  disabled_at BIGINT,
  disabled_reason TEXT
);
CREATE INDEX webhook_subscriptions_company ON webhook_subscriptions (company_id, seq);
CREATE INDEX webhook_subscriptions_active ON webhook_subscriptions (company_id)
  WHERE deleted_at IS NULL AND disabled_at IS NULL;
CREATE TABLE webhook_deliveries (
  seq {{SEQ}},
  callback_id TEXT NOT NULL UNIQUE,
  webhook_id TEXT NOT NULL,
  company_id TEXT NOT NULL,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT,
  claimed_until BIGINT,
  claim_token TEXT,
  created_at BIGINT NOT NULL,
  delivered_at BIGINT,
  last_error TEXT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, seq);
CREATE TABLE webhook_attempts (
  seq {{SEQ}},
  callback_id TEXT NOT NULL,
  attempted_at BIGINT NOT NULL,
  status_code INTEGER,
  latency_ms INTEGER NOT NULL,
  response_snippet TEXT NOT NULL,
  error TEXT,
  manual {{BOOL}} NOT NULL
);
CREATE INDEX webhook_attempts_callback ON webhook_attempts (callback_id, seq);
`;
MIGRATIONS.push({ id: 3, name: 'webhooks', sqlite: both(WEBHOOKS, 'sqlite'), postgres: both(WEBHOOKS, 'postgres') });

// 4. The ingest path keeps one per-account index on transactions. Each per-account index
// dirties a page per account in every group commit; listing an account's transactions of all
// denominations merges its per-denomination ranges of transactions_balance instead.
const LEAN_LEDGER = `DROP INDEX IF EXISTS transactions_account;`;
MIGRATIONS.push({
  id: 4,
  name: 'lean_ledger_indexes',
  sqlite: both(LEAN_LEDGER, 'sqlite'),
  postgres: both(LEAN_LEDGER, 'postgres'),
});

// 5. PostgreSQL compares text in the database's collation unless told otherwise: a libc
// collation (even C.UTF-8 before PostgreSQL 17) calls strcoll for every comparison in every
// index insert and lookup. Every text column here is an identifier, a code or free text that is
// never sorted for people, so all compare as bytes, the order SQLite uses (and the same order
// as C.UTF-8 gives: UTF-8 bytes sort as code points).
const BYTE_ORDER_TEXT = `
DO $$
DECLARE c record;
BEGIN
  FOR c IN SELECT table_name, column_name FROM information_schema.columns
           WHERE table_schema = current_schema() AND data_type = 'text' AND collation_name IS DISTINCT FROM 'C'
           ORDER BY table_name, ordinal_position LOOP
    EXECUTE format('ALTER TABLE %I ALTER COLUMN %I TYPE text COLLATE "C"', c.table_name, c.column_name);
  END LOOP;
END $$;`;
MIGRATIONS.push({ id: 5, name: 'byte_order_text', sqlite: 'SELECT 1;', postgres: BYTE_ORDER_TEXT });

// 6. PostgreSQL: the two rows written per event carry one index fewer each. `seq` orders rows
// inside the per-account index (and keyset cursors are found by id), but nothing looks a row up
// by `seq` alone, so its primary-key index was pure cost on the ingest path: the natural keys
// become the primary keys, and `seq` stays an identity column without an index of its own.
// (SQLite's `seq` is the rowid: no index to drop.) The transaction_id index is rebuilt once.
const NATURAL_KEYS = `
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY USING INDEX events_company_event;
ALTER TABLE transactions DROP CONSTRAINT transactions_pkey, DROP CONSTRAINT transactions_transaction_id_key;
ALTER TABLE transactions ADD CONSTRAINT transactions_pkey PRIMARY KEY (transaction_id);`;
MIGRATIONS.push({ id: 6, name: 'natural_keys_for_ledger_rows', sqlite: 'SELECT 1;', postgres: NATURAL_KEYS });

// 7. Retention: finished outbox rows and old webhook delivery logs are deleted by a background
// job (src/jobs/retention.ts), oldest first, in bounded batches; these indexes find them without
// scanning tables that grow by a row per notification. IF NOT EXISTS: on a large PostgreSQL
// database an operator may build them first with CREATE INDEX CONCURRENTLY (docs/SCALING.md),
// since a plain CREATE INDEX blocks writes to the table while it runs.
const RETENTION_INDEXES = `
CREATE INDEX IF NOT EXISTS outbox_done ON outbox (done_at) WHERE done_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS webhook_deliveries_created ON webhook_deliveries (created_at);`;
MIGRATIONS.push({
  id: 7,
  name: 'retention_indexes',
  sqlite: both(RETENTION_INDEXES, 'sqlite'),
  postgres: both(RETENTION_INDEXES, 'postgres'),
});

// 8. Usage read back (contract "Usage"). Events carry `occurred_at`, the time the usage happened
// (the request's `timestamp`, else when it was recorded); lists read them newest first through
// one index per scope (company, account). Usage is answered from hourly rollups written in the
// transaction that records or settles the events: `usage_hours` per account (its primary key
// serves one account's queries; `usage_hours_company` the company's by account), and
// `usage_company_hours` per company without the account (the company's totals; several rows per
// hour on PostgreSQL, `shard`, so that concurrent group commits of one company do not queue on
// one row). The `hour` indexes let the retention job find old hours without a scan (a new rollup
// row is an index entry more; an update of one is not). On SQLite the event indexes end at the
// rowid, which is `seq`. Quantities are exact decimals: NUMERIC on PostgreSQL; on SQLite TEXT summed by the
// store's own `decimal_add` function.
const USAGE = `
ALTER TABLE events ADD COLUMN occurred_at BIGINT NOT NULL DEFAULT 0;
UPDATE events SET occurred_at = created_at;
CREATE INDEX events_company_occurred ON events (company_id, occurred_at{{SEQ_IN_INDEX}});
CREATE INDEX events_account_occurred ON events (account_id, occurred_at{{SEQ_IN_INDEX}});
CREATE TABLE usage_hours (
  account_id TEXT NOT NULL,
  hour BIGINT NOT NULL,
  denomination TEXT NOT NULL,
  type TEXT NOT NULL,
  company_id TEXT NOT NULL,
  events BIGINT NOT NULL,
  quantity {{DECIMAL}} NOT NULL,
  cost BIGINT NOT NULL,
  PRIMARY KEY (account_id, hour, denomination, type)
);
CREATE INDEX usage_hours_company ON usage_hours (company_id, hour);
CREATE TABLE usage_company_hours (
  company_id TEXT NOT NULL,
  hour BIGINT NOT NULL,
  denomination TEXT NOT NULL,
  type TEXT NOT NULL,
  shard INTEGER NOT NULL,
  events BIGINT NOT NULL,
  quantity {{DECIMAL}} NOT NULL,
  cost BIGINT NOT NULL,
  PRIMARY KEY (company_id, hour, denomination, type, shard)
);
CREATE INDEX usage_hours_hour ON usage_hours (hour);
CREATE INDEX usage_company_hours_hour ON usage_company_hours (hour);`;
MIGRATIONS.push({
  id: 8,
  name: 'usage',
  sqlite: both(USAGE, 'sqlite'),
  postgres: `${both(USAGE, 'postgres')}
ALTER TABLE usage_hours ALTER COLUMN account_id TYPE text COLLATE "C", ALTER COLUMN denomination TYPE text COLLATE "C",
  ALTER COLUMN type TYPE text COLLATE "C", ALTER COLUMN company_id TYPE text COLLATE "C";
ALTER TABLE usage_company_hours ALTER COLUMN company_id TYPE text COLLATE "C",
  ALTER COLUMN denomination TYPE text COLLATE "C", ALTER COLUMN type TYPE text COLLATE "C";`,
});

// 9. Idempotency-Key claims are leased: `owner` is the claiming request's random token and
// `lease_expires_at` (wall-clock epoch ms) when its claim lapses unless renewed. A claim whose owner
// died (kill -9 mid-request) is taken over by a retry once the lease is over; rows claimed before
// this migration have no lease, and are taken over at once (no answer was ever recorded for them).
const IDEMPOTENCY_LEASE = `
ALTER TABLE idempotency_keys ADD COLUMN owner TEXT;
ALTER TABLE idempotency_keys ADD COLUMN lease_expires_at BIGINT;`;
MIGRATIONS.push({
  id: 9,
  name: 'idempotency_lease',
  sqlite: both(IDEMPOTENCY_LEASE, 'sqlite'),
  postgres: `${both(IDEMPOTENCY_LEASE, 'postgres')}
ALTER TABLE idempotency_keys ALTER COLUMN owner TYPE text COLLATE "C";`,
});

// 10. Console sessions and one-time email tokens (docs/ARCHITECTURE.md, "Sessions and the console's
// API"). A session is known only by the SHA-256 of its random id (`id_hash`); it ends at
// `expires_at` (the absolute limit), after the idle time past `last_seen_at` (the server's setting,
// applied when it is read), or when revoked. A user token (email verification, password reset) is
// likewise stored only hashed, has a purpose, an expiry, and is used at most once (`used_at`).
const SESSIONS = `
CREATE TABLE sessions (
  id_hash TEXT PRIMARY KEY,
  user_id BIGINT NOT NULL REFERENCES users(id),
  csrf_token TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE TABLE user_tokens (
  token_hash TEXT PRIMARY KEY,
  user_id BIGINT NOT NULL REFERENCES users(id),
  purpose TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);
CREATE INDEX user_tokens_user ON user_tokens (user_id);`;
MIGRATIONS.push({
  id: 10,
  name: 'sessions',
  sqlite: both(SESSIONS, 'sqlite'),
  // Every text column compares as bytes on PostgreSQL too (collation "C", as since migration 6).
  postgres: `${both(SESSIONS, 'postgres')}
ALTER TABLE sessions ALTER COLUMN id_hash TYPE text COLLATE "C", ALTER COLUMN csrf_token TYPE text COLLATE "C";
ALTER TABLE user_tokens ALTER COLUMN token_hash TYPE text COLLATE "C", ALTER COLUMN purpose TYPE text COLLATE "C";`,
});

// 11. SQLite: both usage rollups become WITHOUT ROWID tables, clustered on their primary key. A
// group's upsert of a rollup row was a seek in the primary key's index and then one in the rowid
// table (a new row: an entry in both); now it is one seek in one B-tree. The `hour` indexes go
// too: the retention job finds old hours company by company through `usage_hours_company` and
// the company rollup's primary key (sqlite/tx.ts), so a new rollup row is one index entry
// (`usage_hours_company`) besides its own. PostgreSQL keeps its heaps and indexes.
const CLUSTERED_USAGE = `
CREATE TABLE usage_hours_clustered (
  account_id TEXT NOT NULL,
  hour BIGINT NOT NULL,
  denomination TEXT NOT NULL,
  type TEXT NOT NULL,
  company_id TEXT NOT NULL,
  events BIGINT NOT NULL,
  quantity TEXT NOT NULL,
  cost BIGINT NOT NULL,
  PRIMARY KEY (account_id, hour, denomination, type)
) WITHOUT ROWID;
INSERT INTO usage_hours_clustered (account_id, hour, denomination, type, company_id, events, quantity, cost)
  SELECT account_id, hour, denomination, type, company_id, events, quantity, cost FROM usage_hours;
DROP TABLE usage_hours;
ALTER TABLE usage_hours_clustered RENAME TO usage_hours;
CREATE INDEX usage_hours_company ON usage_hours (company_id, hour);
CREATE TABLE usage_company_hours_clustered (
  company_id TEXT NOT NULL,
  hour BIGINT NOT NULL,
  denomination TEXT NOT NULL,
  type TEXT NOT NULL,
  shard INTEGER NOT NULL,
  events BIGINT NOT NULL,
  quantity TEXT NOT NULL,
  cost BIGINT NOT NULL,
  PRIMARY KEY (company_id, hour, denomination, type, shard)
) WITHOUT ROWID;
INSERT INTO usage_company_hours_clustered (company_id, hour, denomination, type, shard, events, quantity, cost)
  SELECT company_id, hour, denomination, type, shard, events, quantity, cost FROM usage_company_hours;
DROP TABLE usage_company_hours;
ALTER TABLE usage_company_hours_clustered RENAME TO usage_company_hours;`;
MIGRATIONS.push({ id: 11, name: 'clustered_usage_rollups', sqlite: CLUSTERED_USAGE, postgres: 'SELECT 1;' });

// 12. API keys remember when they were last used (`last_used_at`, epoch ms from the injected clock; NULL:
// never, or not since this migration). The API key cache writes it at most once a minute per key, in a
// transaction of its own, never in the request's; the ingest path only reads the clock.
const API_KEY_LAST_USED = `ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;`;
MIGRATIONS.push({
  id: 12,
  name: 'api_key_last_used',
  sqlite: both(API_KEY_LAST_USED, 'sqlite'),
  postgres: both(API_KEY_LAST_USED, 'postgres'),
});
