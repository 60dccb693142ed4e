/**
 * The Store interface: what the operations need, nothing more. Two implementations
 * (sqlite.ts, postgres.ts) pass one contract suite (test/store/*.contract.test.ts).
 *
 * Locking: every method of `Tx` runs inside the transaction opened by `Store.write`. Balances are
 * locked and changed only through the ledger's port (src/ledger/port.ts: `lockBalances`, then
 * `writeLedger`, an atomic `amount = amount + ?` with the transactions that record it), which only
 * src/ledger/ reaches.
 *
 * Layout: one folder per aggregate, each with its part of `Tx`/`ReadTx` and its row types
 * (`types.ts`), and its row mappers and the SQL both databases share (`sql.ts`); its contract
 * tests are test/store/<aggregate>.contract.test.ts (store.contract.test.ts: transactions, concurrency).
 *
 *   identity/     users, companies, members, API keys
 *   idempotency/  idempotency keys (request replay)
 *   accounts/     accounts
 *   balances/     balances: reads, locks, deltas
 *   alerts/       alerts on balances: rules and states, written with their balance locked
 *   features/     features, plan features, accounts' overrides: what entitles an account
 *   prices/       a company's unit price per event type
 *   grants/       credit grants: the lots of a balance (live ones kept in the balance row)
 *   events/       events and holds
 *   usage/        the hourly usage rollups (per account, per company), their retention
 *   cards/        an account's card on file
 *   refills/      refill settings and state of a balance, the monthly refill schedule
 *   charges/      USD charges to a card, the money-movement audit
 *   transactions/ the ledger's rows (the API's transactions), their listing, the ledger audit
 *   ledger/       the ledger's port (src/ledger/port.ts): every write of a balance's figures and grants,
 *                 with the events, transactions and usage written with them (writeLedger: a posting)
 *   plans/        plans, account plans, plan balances
 *   webhooks/     subscriptions, deliveries, attempts, claims, retention
 *   outbox/       the outbox (jobs): insert, claims, retention
 *   sessions/     console sessions, one-time email tokens (verification, password reset)
 *   portal-sessions/ customer portal sessions: an account's end customer let in by a hashed token
 *   topup-offers/ credit packs: a company's offers of units for a USD charge
 *   leases/       leases: units held on a balance for a client's local decisions (written by the ledger)
 *   common.ts     pages and audit findings, shared by several aggregates
 *
 *   sql-core.ts   SqlCore, the base of every aggregate's SQL: the executor and the Dialect (what differs
 *                 in shared statements), row value conversions, keyset paging
 *   sql-tx.ts     SqlTx: a transaction, one object per aggregate made on first use, the dialect's own
 *                 where it differs
 *   sqlite/       what SQLite does differently: dialect.ts, exec.ts (cached statements, raw rows), the
 *                 aggregates it writes its own way (events.ts, usage.ts, ledger.ts), tx.ts
 *   postgres/     what PostgreSQL does differently: dialect.ts, exec.ts (numbered, prepared, array
 *                 parameters), statements.ts (the ingest path's batch statements), events.ts,
 *                 webhooks.ts, ledger.ts, tx.ts
 *   sqlite.ts, postgres.ts   the stores: connections, transactions, migrations on open
 *   open.ts       picks the store from DATABASE_URL
 *   migrations/   the schema: one file per migration, index.ts lists them in order
 *
 * Every type is re-exported here: code outside src/store imports only this file.
 */
import type { AccountsReadTx, AccountsTx } from './accounts/types.js';
import type { AlertsReadTx, AlertsTx } from './alerts/types.js';
import type { FeaturesReadTx, FeaturesTx } from './features/types.js';
import type { PortalSessionsReadTx, PortalSessionsTx } from './portal-sessions/types.js';
import type { TopupOffersReadTx, TopupOffersTx } from './topup-offers/types.js';
import type { LeasesReadTx, LeasesTx } from './leases/types.js';
import type { BalancesReadTx, BalancesTx } from './balances/types.js';
import type { CardsReadTx, CardsTx } from './cards/types.js';
import type { ChargesReadTx, ChargesTx } from './charges/types.js';
import type { EventsReadTx, EventsTx } from './events/types.js';
import type { GrantsReadTx, GrantsTx } from './grants/types.js';
import type { IdempotencyReadTx, IdempotencyTx } from './idempotency/types.js';
import type { IdentityReadTx, IdentityTx } from './identity/types.js';
import type { TransactionsReadTx, TransactionsTx } from './transactions/types.js';
import { LEDGER_PORT, type LedgerPort, type LedgerReadPort } from '../ledger/port.js';
import type { OutboxReadTx, OutboxTx } from './outbox/types.js';
import type { PlansReadTx, PlansTx } from './plans/types.js';
import type { PricesReadTx, PricesTx } from './prices/types.js';
import type { RefillsTx } from './refills/types.js';
import type { SessionsReadTx, SessionsTx } from './sessions/types.js';
import type { UsageReadTx, UsageTx } from './usage/types.js';
import type { WebhooksReadTx, WebhooksTx } from './webhooks/types.js';

export type * from './accounts/types.js';
export type * from './alerts/types.js';
export type * from './features/types.js';
export type * from './portal-sessions/types.js';
export type * from './topup-offers/types.js';
export type * from './leases/types.js';
export type * from './balances/types.js';
export type * from './cards/types.js';
export type * from './charges/types.js';
export type * from './common.js';
export { CommitOutcomeUnknownError } from './common.js';
export type * from './events/types.js';
export type * from './grants/types.js';
export type * from './idempotency/types.js';
export type * from './identity/types.js';
export type * from './transactions/types.js';
export type * from './outbox/types.js';
export type * from './plans/types.js';
export type * from './prices/types.js';
export type * from './refills/types.js';
export type * from './sessions/types.js';
export type * from './usage/types.js';
export type * from './webhooks/types.js';

/**
 * A read of committed data: one object per aggregate (`tx.accounts.findAccount(…)`), and the ledger's
 * read port (src/ledger/port.ts), reached only through `portOf`.
 */
export interface ReadTx {
  readonly identity: IdentityReadTx;
  readonly idempotency: IdempotencyReadTx;
  readonly accounts: AccountsReadTx;
  readonly balances: BalancesReadTx;
  readonly alerts: AlertsReadTx;
  readonly features: FeaturesReadTx;
  readonly portalSessions: PortalSessionsReadTx;
  readonly topupOffers: TopupOffersReadTx;
  readonly leases: LeasesReadTx;
  readonly grants: GrantsReadTx;
  readonly prices: PricesReadTx;
  readonly events: EventsReadTx;
  readonly usage: UsageReadTx;
  readonly cards: CardsReadTx;
  readonly charges: ChargesReadTx;
  readonly transactions: TransactionsReadTx;
  readonly plans: PlansReadTx;
  readonly webhooks: WebhooksReadTx;
  readonly outbox: OutboxReadTx;
  readonly sessions: SessionsReadTx;
  readonly [LEDGER_PORT]: LedgerReadPort;
}

/**
 * A write transaction: each aggregate's reads and writes, and the ledger's port, the only way a
 * balance's figures and grants change (src/ledger/port.ts: only the ledger reaches it).
 * Refills have no read of their own: a balance's refill columns are read with it (balances/).
 */
export interface Tx extends ReadTx {
  readonly identity: IdentityTx;
  readonly idempotency: IdempotencyTx;
  readonly accounts: AccountsTx;
  readonly balances: BalancesTx;
  readonly alerts: AlertsTx;
  readonly features: FeaturesTx;
  readonly portalSessions: PortalSessionsTx;
  readonly topupOffers: TopupOffersTx;
  readonly leases: LeasesTx;
  readonly grants: GrantsTx;
  readonly prices: PricesTx;
  readonly events: EventsTx;
  readonly usage: UsageTx;
  readonly cards: CardsTx;
  readonly refills: RefillsTx;
  readonly charges: ChargesTx;
  readonly transactions: TransactionsTx;
  readonly plans: PlansTx;
  readonly webhooks: WebhooksTx;
  readonly outbox: OutboxTx;
  readonly sessions: SessionsTx;
  readonly [LEDGER_PORT]: LedgerPort;
}

export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  /** Runs `fn` in one write transaction; retries it on serialization failures and deadlocks. */
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Runs `fn` on committed data, outside any write transaction. */
  read<T>(fn: (tx: ReadTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
