/**
 * 1. The core ledger: users, companies, members and API keys; accounts, balances, prices,
 * events and ledger transactions; the outbox; idempotency keys.
 */
import { both, type Migration } from './migration.js';

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

export const coreLedger: Migration = {
  id: 1,
  name: 'core ledger',
  sqlite: both(CORE, 'sqlite'),
  postgres: both(CORE, 'postgres'),
};
