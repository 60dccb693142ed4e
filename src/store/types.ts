/**
 * The Store interface: what the operations need, nothing more. Two implementations
 * (sqlite.ts, postgres.ts) pass one contract suite (test/store/*.contract.test.ts).
 *
 * Locking: every method of `Tx` runs inside the transaction opened by `Store.write`.
 * `lockBalances` is the only method that takes row locks for balance changes; on PostgreSQL it
 * locks with `FOR UPDATE` in the sorted key order so concurrent writers never deadlock; on
 * SQLite the single writer (BEGIN IMMEDIATE) already serialises them. Balances change only
 * through `applyBalanceDeltas` (an atomic `amount = amount + ?`) together with appended
 * `insertTransactions` rows in the same transaction.
 *
 * Layout: one folder per aggregate, each with its part of `Tx`/`ReadTx` and its row types
 * (`types.ts`), and its row mappers and the SQL both databases share (`sql.ts`); its contract
 * tests are test/store/<aggregate>.contract.test.ts (store.contract.test.ts: transactions, concurrency).
 *
 *   identity/     users, companies, members, API keys
 *   idempotency/  idempotency keys (request replay)
 *   accounts/     accounts
 *   balances/     balances: reads, locks, deltas
 *   prices/       a company's unit price per event type
 *   grants/       credit grants: the lots of a balance (live ones kept in the balance row)
 *   events/       events and holds
 *   usage/        the hourly usage rollups (per account, per company), their retention
 *   cards/        an account's card on file
 *   refills/      refill settings and state of a balance, the monthly refill schedule
 *   charges/      USD charges to a card, the money-movement audit
 *   ledger/       ledger transactions, writeLedger (the ingest path's whole write), the ledger audit
 *   plans/        plans, account plans, plan balances
 *   webhooks/     subscriptions, deliveries, attempts, claims, retention
 *   outbox/       the outbox (jobs): insert, claims, retention
 *   sessions/     console sessions, one-time email tokens (verification, password reset)
 *   common.ts     pages and audit findings, shared by several aggregates
 *
 *   sql-core.ts   SqlCore: the executor, row value conversions, keyset paging, the dialect hooks
 *   sql-base.ts   SqlTx: every aggregate's sql.ts mixed into one class
 *   sqlite/       what SQLite does differently: exec.ts (cached statements, raw rows), tx.ts
 *   postgres/     what PostgreSQL does differently: exec.ts (numbered, prepared, array
 *                 parameters), statements.ts (the ingest path's batch statements), tx.ts
 *   sqlite.ts, postgres.ts   the stores: connections, transactions, migrations on open
 *   open.ts       picks the store from DATABASE_URL
 *   migrations/   the schema: one file per migration, index.ts lists them in order
 *
 * Every type is re-exported here: code outside src/store imports only this file.
 */
import type { AccountsReadTx, AccountsTx } from './accounts/types.js';
import type { BalancesReadTx, BalancesTx } from './balances/types.js';
import type { CardsReadTx, CardsTx } from './cards/types.js';
import type { ChargesReadTx, ChargesTx } from './charges/types.js';
import type { EventsReadTx, EventsTx } from './events/types.js';
import type { GrantsReadTx, GrantsTx } from './grants/types.js';
import type { IdempotencyReadTx, IdempotencyTx } from './idempotency/types.js';
import type { IdentityReadTx, IdentityTx } from './identity/types.js';
import type { LedgerReadTx, LedgerTx } from './ledger/types.js';
import type { OutboxReadTx, OutboxTx } from './outbox/types.js';
import type { PlansReadTx, PlansTx } from './plans/types.js';
import type { PricesReadTx, PricesTx } from './prices/types.js';
import type { RefillsTx } from './refills/types.js';
import type { SessionsReadTx, SessionsTx } from './sessions/types.js';
import type { UsageReadTx, UsageTx } from './usage/types.js';
import type { WebhooksReadTx, WebhooksTx } from './webhooks/types.js';

export type * from './accounts/types.js';
export type * from './balances/types.js';
export type * from './cards/types.js';
export type * from './charges/types.js';
export type * from './common.js';
export { CommitOutcomeUnknownError } from './common.js';
export type * from './events/types.js';
export type * from './grants/types.js';
export type * from './idempotency/types.js';
export type * from './identity/types.js';
export type * from './ledger/types.js';
export type * from './outbox/types.js';
export type * from './plans/types.js';
export type * from './prices/types.js';
export type * from './refills/types.js';
export type * from './sessions/types.js';
export type * from './usage/types.js';
export type * from './webhooks/types.js';

/** Refills have no read of their own: a balance's refill columns are read with it (balances/). */
export interface ReadTx
  extends IdentityReadTx,
    IdempotencyReadTx,
    AccountsReadTx,
    BalancesReadTx,
    GrantsReadTx,
    PricesReadTx,
    EventsReadTx,
    UsageReadTx,
    CardsReadTx,
    ChargesReadTx,
    LedgerReadTx,
    PlansReadTx,
    WebhooksReadTx,
    OutboxReadTx,
    SessionsReadTx {}

export interface Tx
  extends ReadTx,
    IdentityTx,
    IdempotencyTx,
    AccountsTx,
    BalancesTx,
    GrantsTx,
    PricesTx,
    EventsTx,
    UsageTx,
    CardsTx,
    RefillsTx,
    ChargesTx,
    LedgerTx,
    PlansTx,
    WebhooksTx,
    OutboxTx,
    SessionsTx {}

export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  /** Runs `fn` in one write transaction; retries it on serialization failures and deadlocks. */
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Runs `fn` on committed data, outside any write transaction. */
  read<T>(fn: (tx: ReadTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
