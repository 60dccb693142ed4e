/**
 * 18. Receipts (contract "Customer portal, top-ups and receipts"):
 * - `charges.receipt_number` and `receipt_at`: every succeeded charge's receipt `R-{n}`, numbered per company;
 *   `charges.grant_id`: the grant a refill or a proration added (what the receipt says it bought);
 * - `receipt_counters`: a company's last receipt number, raised in the transaction that records a charge's
 *   success (the row's lock orders two processes' charges; a rollback takes the number back with the charge), so
 *   numbers have no gap and no repeat; the unique index refuses a repeat outright.
 * Charges that succeeded before this migration are numbered now, in the order they were made.
 */
import { BYTE_ORDER_TEXT } from './005-byte-order-text.js';
import { both, type Migration } from './migration.js';

const RECEIPTS = `
ALTER TABLE charges ADD COLUMN receipt_number BIGINT;
ALTER TABLE charges ADD COLUMN receipt_at BIGINT;
ALTER TABLE charges ADD COLUMN grant_id TEXT;
CREATE UNIQUE INDEX charges_receipt ON charges (company_id, receipt_number) WHERE receipt_number IS NOT NULL;
CREATE TABLE receipt_counters (
  company_id TEXT PRIMARY KEY,
  last_number BIGINT NOT NULL
);
UPDATE charges SET receipt_number = n.number, receipt_at = charges.updated_at
FROM (
  SELECT charge_id, ROW_NUMBER() OVER (PARTITION BY company_id ORDER BY seq) AS number
  FROM charges WHERE status = 'succeeded'
) AS n
WHERE charges.charge_id = n.charge_id;
INSERT INTO receipt_counters (company_id, last_number)
SELECT company_id, MAX(receipt_number) FROM charges WHERE receipt_number IS NOT NULL GROUP BY company_id;
`;

export const receipts: Migration = {
  id: 18,
  name: 'receipts',
  sqlite: both(RECEIPTS, 'sqlite'),
  postgres: both(RECEIPTS, 'postgres') + BYTE_ORDER_TEXT,
};
