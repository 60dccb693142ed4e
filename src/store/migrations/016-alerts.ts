/**
 * 16. Alerts (contract "Spend limits and alerts"): one row per alert, with its rule (metric, threshold, window,
 * event type), its state (status; for a triggered spend alert, the start of the window it was triggered in and
 * `resolves_at`, that window's end: the index of the job that resolves alerts of balances nobody touches), its
 * last crossings, and for a spend alert of one event type that type's spend in its window (`type_spend_start`,
 * `type_spend`), which the balance does not keep. Rows are read and written only with their balance locked.
 * `balances.alert_count`: how many alerts a balance has, read with it, so that a posting on a balance without
 * alerts (the usual case) costs no query; `balances.alert_watch`: the bounds within which no change of the balance
 * can change any of its alerts' statuses (domain/alerts.ts AlertWatch, as JSON), so that a posting that stays
 * inside them reads no alert either.
 */
import { BYTE_ORDER_TEXT } from './005-byte-order-text.js';
import { both, type Migration } from './migration.js';

const ALERTS = `
CREATE TABLE alerts (
  seq {{SEQ}},
  alert_id TEXT NOT NULL UNIQUE,
  company_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  denomination TEXT NOT NULL,
  metric TEXT NOT NULL,
  threshold BIGINT NOT NULL,
  alert_window TEXT,
  event_type TEXT,
  name TEXT,
  status TEXT NOT NULL,
  window_start BIGINT,
  resolves_at BIGINT,
  triggered_at BIGINT,
  resolved_at BIGINT,
  type_spend_start BIGINT,
  type_spend BIGINT,
  created_at BIGINT NOT NULL
);
CREATE INDEX alerts_account ON alerts (account_id, seq);
CREATE INDEX alerts_balance ON alerts (account_id, denomination);
CREATE INDEX alerts_triggered ON alerts (company_id, seq) WHERE status = 'triggered';
CREATE INDEX alerts_resolves ON alerts (resolves_at) WHERE resolves_at IS NOT NULL;
ALTER TABLE balances ADD COLUMN alert_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE balances ADD COLUMN alert_watch TEXT;
`;

export const alerts: Migration = {
  id: 16,
  name: 'alerts',
  sqlite: both(ALERTS, 'sqlite'),
  postgres: both(ALERTS, 'postgres') + BYTE_ORDER_TEXT,
};
