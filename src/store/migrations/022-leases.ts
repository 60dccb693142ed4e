/**
 * 22. Leases (contract "Leases"): units held on a balance for a short time, drawn by the events that name them
 * (`events.lease_id`), released at close or expiry. The expiry job finds open leases by `expires_at`.
 */
import { BYTE_ORDER_TEXT } from './005-byte-order-text.js';
import { both, type Migration } from './migration.js';

const LEASES = `
CREATE TABLE leases (
  seq {{SEQ}},
  lease_id TEXT NOT NULL,
  company_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  denomination TEXT NOT NULL,
  client_id TEXT,
  amount BIGINT NOT NULL,
  used BIGINT NOT NULL,
  released BIGINT NOT NULL,
  status TEXT NOT NULL,
  held_from TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  closed_at BIGINT
);
CREATE UNIQUE INDEX leases_id ON leases (lease_id);
CREATE UNIQUE INDEX leases_company_client_id ON leases (company_id, client_id);
CREATE INDEX leases_account ON leases (account_id{{SEQ_IN_INDEX}});
CREATE INDEX leases_open_expiry ON leases (expires_at) WHERE status = 'open';
ALTER TABLE events ADD COLUMN lease_id TEXT;
`;

export const leases: Migration = {
  id: 22,
  name: 'leases',
  sqlite: both(LEASES, 'sqlite'),
  postgres: both(LEASES, 'postgres') + BYTE_ORDER_TEXT,
};
