/**
 * Schema migrations, one list for both databases, one file per migration. Each step has the SQL
 * of each dialect; the differences are kept to types (identity columns, booleans, doubles:
 * `both`, migration.ts). Applied at start, in order, each once (recorded by id in
 * schema_migrations): a migration's id, and what it did to existing databases, never change; a
 * new one goes at the end, in a file of its own.
 */
import { coreLedger } from './001-core-ledger.js';
import { moneyMovement } from './002-money-movement.js';
import { webhooks } from './003-webhooks.js';
import { leanLedgerIndexes } from './004-lean-ledger-indexes.js';
import { byteOrderText } from './005-byte-order-text.js';
import { naturalKeysForLedgerRows } from './006-natural-keys-for-ledger-rows.js';
import { retentionIndexes } from './007-retention-indexes.js';
import { usage } from './008-usage.js';
import { idempotencyLease } from './009-idempotency-lease.js';
import { sessions } from './010-sessions.js';
import { clusteredUsageRollups } from './011-clustered-usage-rollups.js';
import { apiKeyLastUsed } from './012-api-key-last-used.js';
import { priceModels } from './013-price-models.js';
import { creditGrants } from './014-credit-grants.js';
import { spendLimits } from './015-spend-limits.js';
import { alerts } from './016-alerts.js';
import { features } from './017-features.js';
import { receipts } from './018-receipts.js';
import { portalSessions } from './019-portal-sessions.js';
import { topupOffers } from './020-topup-offers.js';
import { chargeActions } from './021-charge-actions.js';
import { leases } from './022-leases.js';
import { portalSessionExpiry } from './023-portal-session-expiry.js';
import type { Migration } from './migration.js';

export type { Migration } from './migration.js';

export const MIGRATIONS: Migration[] = [
  coreLedger,
  moneyMovement,
  webhooks,
  leanLedgerIndexes,
  byteOrderText,
  naturalKeysForLedgerRows,
  retentionIndexes,
  usage,
  idempotencyLease,
  sessions,
  clusteredUsageRollups,
  apiKeyLastUsed,
  priceModels,
  creditGrants,
  spendLimits,
  alerts,
  features,
  receipts,
  portalSessions,
  topupOffers,
  chargeActions,
  leases,
  portalSessionExpiry,
];
