/**
 * 14. Credit grants (contract "Credit grants"): every unit of a balance belongs to a grant.
 * - `grants`: one row per grant, with what never changes (amount, category, source, times, name,
 *   metadata, cost basis) and what changes rarely (priority, expires_at, voided_at). `expiry_order`
 *   is `expires_at`, or the largest safe integer when it never expires: the company's list by
 *   expiry is one index range. `remaining`
 *   and `held` in the row are the final figures once the grant is finished (used up, or closed
 *   with nothing held); while it is live they are the balance's.
 * - `balances.grants`: the balance's live grants with their remainders and holds, as JSON
 *   (store/grants/sql.ts, `encodeLots`), written with the balance in the same statement:
 *   ingest writes no grant row per event. `balances.grants_due_at`: the soonest start or expiry
 *   of those grants (the expiry job's index).
 * - `transactions.grant_id`, `transactions.drawn_from`; `events.held_from` (the units a pending
 *   event holds, per grant).
 * - Every balance with a positive amount gets one `initial` grant holding it (promotional,
 *   priority 50, no expiry); a negative amount is debt.
 */
import { BYTE_ORDER_TEXT } from './005-byte-order-text.js';
import type { Migration } from './migration.js';

const TABLES = `
CREATE TABLE grants (
  grant_id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  denomination TEXT NOT NULL,
  amount BIGINT NOT NULL,
  remaining BIGINT NOT NULL,
  held BIGINT NOT NULL,
  priority INTEGER NOT NULL,
  category TEXT NOT NULL,
  cost_basis TEXT,
  name TEXT,
  metadata TEXT,
  source TEXT NOT NULL,
  effective_at BIGINT NOT NULL,
  expires_at BIGINT,
  expiry_order BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  voided_at BIGINT
);
CREATE INDEX grants_balance ON grants (account_id, denomination);
CREATE INDEX grants_company_expiry ON grants (company_id, expiry_order, grant_id);
ALTER TABLE balances ADD COLUMN grants TEXT NOT NULL DEFAULT '[]';
ALTER TABLE balances ADD COLUMN grants_due_at BIGINT;
CREATE INDEX balances_grants_due ON balances (grants_due_at) WHERE grants_due_at IS NOT NULL;
ALTER TABLE transactions ADD COLUMN grant_id TEXT;
ALTER TABLE transactions ADD COLUMN drawn_from TEXT;
ALTER TABLE events ADD COLUMN held_from TEXT;
`;

/** The lots of one `initial` grant (the encodeLots layout), from the balance's columns and its new id. */
const lotsOf = (id: string, amount: string, createdAt: string) =>
  `'[["' || ${id} || '",' || ${amount} || ',' || ${amount} || ',0,50,"promotional","initial",' || ${createdAt} || ` +
  `',null,null,1,0]]'`;

/** `expiry_order` of a grant that never expires: after every instant (Number.MAX_SAFE_INTEGER). */
const NEVER = '9007199254740991';

const COPY_INITIAL_GRANTS = (idOf: string) => `
INSERT INTO grants (grant_id, company_id, account_id, denomination, amount, remaining, held, priority, category,
  source, effective_at, expiry_order, created_at)
  SELECT ${idOf}, company_id, account_id, denomination, amount, amount, 0, 50, 'promotional', 'initial',
    created_at, ${NEVER}, created_at
  FROM balances WHERE amount > 0;
`;

const SQLITE =
  TABLES +
  `UPDATE balances SET grants = ${lotsOf("'g_0' || lower(hex(randomblob(10)))", 'amount', 'created_at')}
  WHERE amount > 0;` +
  COPY_INITIAL_GRANTS("json_extract(grants, '$[0][0]')");

const POSTGRES =
  TABLES +
  `UPDATE balances SET grants = ${lotsOf(
    "'g_0' || substr(md5(random()::text || account_id || denomination), 1, 20)",
    'amount::text',
    'created_at::text',
  )} WHERE amount > 0;` +
  COPY_INITIAL_GRANTS('(grants::jsonb -> 0 ->> 0)') +
  BYTE_ORDER_TEXT;

export const creditGrants: Migration = {
  id: 14,
  name: 'credit_grants',
  sqlite: SQLITE,
  postgres: POSTGRES,
};
