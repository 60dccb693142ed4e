/**
 * 21. Charges that wait for the customer (3-D Secure, contract "Customer portal, top-ups and receipts"):
 * `next_action_url`, where the customer completes a charge in status `requires_action`; cleared when it ends.
 */
import { BYTE_ORDER_TEXT } from './005-byte-order-text.js';
import { both, type Migration } from './migration.js';

const CHARGE_ACTIONS = `
ALTER TABLE charges ADD COLUMN next_action_url TEXT;
`;

export const chargeActions: Migration = {
  id: 21,
  name: 'charge_actions',
  sqlite: both(CHARGE_ACTIONS, 'sqlite'),
  postgres: both(CHARGE_ACTIONS, 'postgres') + BYTE_ORDER_TEXT,
};
