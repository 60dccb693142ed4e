/** 2. Money movement: cards, refill state on balances, charges, plans and plan periods. */
import { both, type Migration } from './migration.js';

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

export const moneyMovement: Migration = {
  id: 2,
  name: 'money movement',
  sqlite: money('sqlite'),
  postgres: money('postgres'),
};
