/**
 * SqlTx: the SQL both stores share, one class composed of each aggregate's `sql.ts` (mixins over
 * SqlCore, sql-core.ts). A mixin only adds its methods to the prototype chain: a transaction is
 * still one object, and V8 caches each call site's method lookup as it did for one class; only
 * constructing a transaction walks the mixins' default constructors (about 20 ns more per
 * transaction with a stub executor). Where the dialects differ in what is fast or how rows are
 * locked, sqlite/tx.ts and postgres/tx.ts override a method.
 *
 * Innermost first; an aggregate that calls another's methods comes after it, and its type says
 * so (`ledgerSql` needs `insertEvents`, `applyBalanceDeltas`, `addUsage` and `auditMoneyMovement`:
 * it comes after events, balances, usage and charges).
 */
import { accountsSql } from './accounts/sql.js';
import { balancesSql } from './balances/sql.js';
import { cardsSql } from './cards/sql.js';
import { chargesSql } from './charges/sql.js';
import { eventsSql } from './events/sql.js';
import { idempotencySql } from './idempotency/sql.js';
import { identitySql } from './identity/sql.js';
import { ledgerSql } from './ledger/sql.js';
import { outboxSql } from './outbox/sql.js';
import { plansSql } from './plans/sql.js';
import { pricesSql } from './prices/sql.js';
import { grantsSql } from './grants/sql.js';
import { refillsSql } from './refills/sql.js';
import { sessionsSql } from './sessions/sql.js';
import { SqlCore } from './sql-core.js';
import type { Tx } from './types.js';
import { usageSql } from './usage/sql.js';
import { webhooksSql } from './webhooks/sql.js';

// Innermost first, in three lines for reading: identity, idempotency, accounts and what an
// account holds and spends (balances, prices, events, usage); the money around them (cards,
// refills, charges) and the ledger, which calls into events, balances, usage and charges; then
// plans, webhooks, the outbox and sessions.
const UpToUsage = usageSql(
  eventsSql(pricesSql(grantsSql(balancesSql(accountsSql(idempotencySql(identitySql(SqlCore))))))),
);
const UpToLedger = ledgerSql(chargesSql(refillsSql(cardsSql(UpToUsage))));

export abstract class SqlTx extends sessionsSql(outboxSql(webhooksSql(plansSql(UpToLedger)))) implements Tx {}
