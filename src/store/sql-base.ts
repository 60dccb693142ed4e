/**
 * SqlTx: the SQL both stores share, one class composed of each aggregate's `sql.ts` (mixins over
 * SqlCore, sql-core.ts). A mixin only adds its methods to the prototype chain: a transaction is
 * still one object, and V8 caches each call site's method lookup as it did for one class; only
 * constructing a transaction walks the mixins' default constructors (about 20 ns more per
 * transaction with a stub executor). Where the dialects differ in what is fast or how rows are
 * locked, sqlite/tx.ts and postgres/tx.ts override a method.
 *
 * Innermost first; an aggregate that calls another's methods comes after it (`eventsSql` needs
 * `applyBalanceDeltas` and `auditMoneyMovement`, and its type says so).
 */
import { accountsSql } from './accounts/sql.js';
import { chargesSql } from './charges/sql.js';
import { eventsSql } from './events/sql.js';
import { idempotencySql } from './idempotency/sql.js';
import { identitySql } from './identity/sql.js';
import { outboxSql } from './outbox/sql.js';
import { plansSql } from './plans/sql.js';
import { sessionsSql } from './sessions/sql.js';
import { SqlCore } from './sql-core.js';
import type { Tx } from './types.js';
import { webhooksSql } from './webhooks/sql.js';

export abstract class SqlTx
  extends sessionsSql(
    outboxSql(webhooksSql(plansSql(eventsSql(chargesSql(accountsSql(idempotencySql(identitySql(SqlCore)))))))),
  )
  implements Tx {}

// What this module exported before the split (bench/lib/growth-explain.ts imports SqlTx and the types).
export { type SqlExec, type SqlRow, placeholders } from './sql-core.js';
export { toApiKey, toCompany, toUser } from './identity/sql.js';
export { toAccount, toBalance } from './accounts/sql.js';
export {
  EVENT_COLUMNS,
  TRANSACTION_COLUMNS,
  distinctEventKeys,
  pushEventParams,
  pushTransactionParams,
  toEvent,
  toPrice,
  toTransaction,
} from './events/sql.js';
export { toCharge } from './charges/sql.js';
export {
  WEBHOOK_ATTEMPT_COLUMNS,
  WEBHOOK_DELIVERY_COLUMNS,
  toWebhookDelivery,
  toWebhookSubscription,
  webhookAttemptParams,
  webhookDeliveryParams,
} from './webhooks/sql.js';
