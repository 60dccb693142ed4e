/** 3. Webhooks: subscriptions, deliveries and their attempts. */
import { both, type Migration } from './migration.js';

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

export const webhooks: Migration = {
  id: 3,
  name: 'webhooks',
  sqlite: both(WEBHOOKS, 'sqlite'),
  postgres: both(WEBHOOKS, 'postgres'),
};
