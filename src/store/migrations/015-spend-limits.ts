/**
 * 15. Spend and its limits (contract "Spend limits and alerts"), on the balance row the posting already
 * writes: the units usage took in the current UTC day and month, each with its window's start (a window
 * that has ended reads as 0: domain/spend.ts), and the daily and monthly limits (NULL: none). Written with
 * the balance's figures, in the same statement, once per balance per group commit. Beside the refill settings,
 * `refill_max_per_month` (NULL: no cap), the threshold refills started in a UTC month (`refills_month_start`,
 * `refills_in_month`) and the month whose `refill_capped` notification was written (`refill_capped_month`).
 */
import { both, type Migration } from './migration.js';

const SPEND = `
ALTER TABLE balances ADD COLUMN spend_day_start BIGINT NOT NULL DEFAULT 0;
ALTER TABLE balances ADD COLUMN spend_day BIGINT NOT NULL DEFAULT 0;
ALTER TABLE balances ADD COLUMN spend_month_start BIGINT NOT NULL DEFAULT 0;
ALTER TABLE balances ADD COLUMN spend_month BIGINT NOT NULL DEFAULT 0;
ALTER TABLE balances ADD COLUMN limit_daily BIGINT;
ALTER TABLE balances ADD COLUMN limit_monthly BIGINT;
ALTER TABLE balances ADD COLUMN refill_max_per_month BIGINT;
ALTER TABLE balances ADD COLUMN refills_month_start BIGINT NOT NULL DEFAULT 0;
ALTER TABLE balances ADD COLUMN refills_in_month BIGINT NOT NULL DEFAULT 0;
ALTER TABLE balances ADD COLUMN refill_capped_month BIGINT;
`;

export const spendLimits: Migration = {
  id: 15,
  name: 'spend_limits',
  sqlite: both(SPEND, 'sqlite'),
  postgres: both(SPEND, 'postgres'),
};
