/**
 * The Store interface: what the operations need, nothing more. Two implementations
 * (sqlite.ts, postgres.ts) pass one contract suite (test/store/contract.test.ts).
 *
 * Locking: every method of `Tx` runs inside the transaction opened by `Store.write`.
 * `lockBalances` is the only method that takes row locks for balance changes; on PostgreSQL it
 * locks with `FOR UPDATE` in the sorted key order so concurrent writers never deadlock; on
 * SQLite the single writer (BEGIN IMMEDIATE) already serialises them. Balances change only
 * through `applyBalanceDeltas` (an atomic `amount = amount + ?`) together with appended
 * `insertTransactions` rows in the same transaction.
 */

export interface UserRow {
  id: number;
  name: string;
  email: string;
  passwordHash: string;
  dateOfBirth: string | null;
  emailVerified: boolean;
  createdAtMs: number;
}

export interface CompanyRow {
  companyId: string;
  name: string;
  ownerUserId: number;
  processor: 'sandbox' | 'stripe';
  processorApiKey: string | null;
  createdAtMs: number;
}

export interface ApiKeyRow {
  keyId: string;
  companyId: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  digest: string;
  /** First characters of the key, shown in listings to tell keys apart. */
  prefix: string;
  createdAtMs: number;
  revokedAtMs: number | null;
}

export interface AccountRow {
  accountId: string;
  companyId: string;
  name: string | null;
  email: string | null;
  metadata: Record<string, unknown> | null;
  processorId: string | null;
  planId: string | null;
  createdAtMs: number;
}

export interface BalanceRow {
  accountId: string;
  companyId: string;
  denomination: string;
  amount: number;
  pending: number;
  refillThreshold: number | null;
  refillAmount: number | null;
  refillUsdAmount: number | null;
  refillOnDay: string | null;
  createdAtMs: number;
  // --- money movement (filled by every read of a balance row; absent only on rows built in code)
  /** Monthly refill switched on. */
  refillMonthly?: boolean;
  /** Start instant of the monthly schedule (the day rule counts from it). */
  monthlyAnchorAtMs?: number | null;
  /** When the next monthly refill is due. */
  nextRefillAtMs?: number | null;
  /** The refill charge in flight for this balance (at most one), or null. */
  refillChargeId?: string | null;
  consecutiveDeclines?: number;
  /** Threshold and monthly refills stopped after repeated declines, until a new card is attached. */
  autoRefillPaused?: boolean;
  /** Plan balances: the included amount per period, the alert percentage, and whether it was alerted this period. */
  planIncluded?: number | null;
  planAlertPercentage?: string | null;
  planAlerted?: boolean;
}

export interface PriceRow {
  companyId: string;
  type: string;
  denomination: string;
  unitAmount: string;
  updatedAtMs: number;
}

export type EventStateValue = 'pending' | 'complete' | 'cancelled';

export interface EventRow {
  eventId: string;
  companyId: string;
  accountId: string;
  clientSupplied: boolean;
  type: string;
  quantity: number;
  costAmount: number;
  denomination: string;
  metadata: Record<string, unknown> | null;
  state: EventStateValue;
  contentHash: string | null;
  createdAtMs: number;
  updatedAtMs: number;
  expiresAtMs: number | null;
}

export type TransactionKind = 'usage' | 'grant' | 'refill' | 'adjustment' | 'proration' | 'period_reset';

export interface TransactionRow {
  transactionId: string;
  accountId: string;
  denomination: string;
  amount: number;
  balanceAfter: number;
  kind: TransactionKind;
  eventId: string | null;
  reason: string | null;
  createdAtMs: number;
}

export interface OutboxRow {
  outboxId: string;
  companyId: string;
  /** What the worker should do: e.g. `webhook.balance_change`, `charge.refill`. */
  topic: string;
  payload: Record<string, unknown>;
  runAtMs: number;
  createdAtMs: number;
}

/** An outbox row handed to one worker: nobody else gets it until `claimedUntilMs` passes. */
export interface ClaimedOutboxRow extends OutboxRow {
  /** How many times it has been claimed, this claim included. */
  attempts: number;
  claimedUntilMs: number;
}

export interface IdempotencyRow {
  scope: string;
  key: string;
  requestHash: string;
  /** null while the first request is still being served. */
  statusCode: number | null;
  responseBody: string | null;
  createdAtMs: number;
}

/** An event as a company names it. */
export interface EventKey {
  companyId: string;
  eventId: string;
}

export interface BalanceDelta {
  accountId: string;
  denomination: string;
  amount: number;
  pending: number;
}

export interface BalanceKey {
  accountId: string;
  denomination: string;
}

export interface Page {
  limit: number;
  /** Public id of the last row of the previous page (`starting_after`). */
  startingAfter?: string | undefined;
}

export interface PageResult<T> {
  rows: T[];
  hasMore: boolean;
}

/** A broken ledger invariant found by `auditLedger` (empty list: the ledger is exact). */
export interface AuditViolation {
  accountId: string;
  denomination: string;
  problem: string;
}

// --- money movement: rows

export type ChargeStatus = 'pending' | 'succeeded' | 'failed' | 'requires_payment_method';
export type ChargeReason = 'refill' | 'plan' | 'overage' | 'proration';

/** A USD charge to an account's card. The charge id is the processor idempotency key. */
export interface ChargeRow {
  chargeId: string;
  companyId: string;
  accountId: string;
  /** The balance it pays for (refill, proration); null for plan and overage charges. */
  denomination: string | null;
  reason: ChargeReason;
  usdCents: number;
  status: ChargeStatus;
  processorRef: string | null;
  failureCode: string | null;
  failureMessage: string | null;
  /** What the charge pays for (refill: units; proration: the new settings; overage: units per balance). */
  details: Record<string, unknown>;
  /** The ledger transaction it paid for (refill, proration), once it succeeded. */
  transactionId: string | null;
  /** The outbox row that carries it out (settling completes it). */
  outboxId: string | null;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface CardRow {
  accountId: string;
  companyId: string;
  paymentMethodId: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  createdAtMs: number;
}

export interface PlanBalanceRow {
  denomination: string;
  amount: number;
  overageUnitUsdCents: number;
}

export interface PlanRow {
  planId: string;
  companyId: string;
  name: string;
  chargeAmountUsdCents: number;
  billingPeriod: 'month';
  overageChargeMode: 'postpay';
  thresholdAlertPercentage: string | null;
  rollover: boolean;
  balances: PlanBalanceRow[];
  createdAtMs: number;
}

/** An account's plan periods: renewed under the monthly day rule from `anchorAtMs`. */
export interface AccountPlanRow {
  accountId: string;
  companyId: string;
  planId: string;
  anchorAtMs: number;
  periodStartMs: number;
  nextRenewalAtMs: number;
}

export interface RefillSettings {
  refillThreshold: number | null;
  refillAmount: number | null;
  refillUsdAmount: number | null;
  refillOnDay: string | null;
  refillMonthly: boolean;
  monthlyAnchorAtMs: number | null;
  nextRefillAtMs: number | null;
}

export type ChargeChanges = Partial<
  Pick<ChargeRow, 'status' | 'processorRef' | 'failureCode' | 'failureMessage' | 'transactionId' | 'outboxId'>
> & { updatedAtMs: number };

export interface ReadTx {
  findUserByEmail(email: string): Promise<UserRow | undefined>;
  findUserById(id: number): Promise<UserRow | undefined>;
  findCompany(companyId: string): Promise<CompanyRow | undefined>;
  isCompanyMember(companyId: string, userId: number): Promise<boolean>;
  findApiKeyByDigest(digest: string): Promise<ApiKeyRow | undefined>;
  listApiKeys(companyId: string): Promise<ApiKeyRow[]>;

  findAccount(companyId: string, accountId: string): Promise<AccountRow | undefined>;
  /** The owning company of each existing account among `accountIds` (one query for a whole ingest group). */
  findAccountOwners(accountIds: string[]): Promise<{ accountId: string; companyId: string }[]>;
  /** Paged lists resolve to undefined when `startingAfter` names no row of the list. */
  listAccounts(companyId: string, page: Page): Promise<PageResult<AccountRow> | undefined>;
  findBalance(accountId: string, denomination: string): Promise<BalanceRow | undefined>;
  listBalances(accountId: string): Promise<BalanceRow[]>;
  /** The balances of several accounts (a page of them) in one query, by account then denomination. */
  listBalancesOfAccounts(accountIds: string[]): Promise<BalanceRow[]>;
  listPrices(companyId: string, page: Page): Promise<PageResult<PriceRow> | undefined>;
  findPrices(companyId: string, types: string[]): Promise<PriceRow[]>;

  findEvent(companyId: string, eventId: string): Promise<EventRow | undefined>;
  /** Events of the company with these ids (for client-id de-duplication). */
  findEventsByIds(companyId: string, eventIds: string[]): Promise<EventRow[]>;
  /**
   * Pending events whose hold has expired by `nowMs`, oldest first; optionally only of these
   * balances. Inside a write transaction on PostgreSQL the rows are locked (`FOR UPDATE SKIP
   * LOCKED`: a hold another transaction is settling right now is left to it).
   */
  findExpiredHolds(nowMs: number, limit: number, only?: BalanceKey[]): Promise<EventRow[]>;
  listTransactions(
    accountId: string,
    denomination: string | undefined,
    page: Page,
  ): Promise<PageResult<TransactionRow> | undefined>;

  findIdempotency(scope: string, key: string): Promise<IdempotencyRow | undefined>;
  auditLedger(): Promise<AuditViolation[]>;

  // --- money movement
  findCard(accountId: string): Promise<CardRow | undefined>;
  findPlan(companyId: string, planId: string): Promise<PlanRow | undefined>;
  listPlans(companyId: string, page: Page): Promise<PageResult<PlanRow> | undefined>;
  findAccountPlan(accountId: string): Promise<AccountPlanRow | undefined>;
  findCharge(chargeId: string): Promise<ChargeRow | undefined>;
  listCharges(accountId: string, page: Page): Promise<PageResult<ChargeRow> | undefined>;
  /** Outbox rows of a company whose topic starts with `topicPrefix`, oldest first (done or not). */
  listOutboxOfCompany(companyId: string, topicPrefix: string): Promise<OutboxRow[]>;
  /**
   * The money-movement part of the audit: refill transactions and succeeded refill charges
   * match one to one (no refill without a successful charge), at most one refill in flight
   * per balance, succeeded proration charges each paid for one proration transaction.
   */
  auditMoneyMovement(): Promise<AuditViolation[]>;
  // --- webhooks
  /** Subscriptions of the company that are not deleted (disabled ones included), newest first. */
  listWebhookSubscriptions(companyId: string, page: Page): Promise<PageResult<WebhookSubscriptionRow> | undefined>;
  /** A subscription of the company that is not deleted. */
  findWebhookSubscription(companyId: string, webhookId: string): Promise<WebhookSubscriptionRow | undefined>;
  /** Active (not deleted, not disabled) subscriptions of these companies: one indexed query (ingest hot path). */
  findWebhookTargets(companyIds: string[]): Promise<WebhookTarget[]>;
  countWebhookSubscriptions(companyId: string): Promise<number>;
  findWebhookDelivery(companyId: string, callbackId: string): Promise<WebhookDeliveryRow | undefined>;
  /** Deliveries of one subscription, newest first. */
  listWebhookDeliveries(webhookId: string, page: Page): Promise<PageResult<WebhookDeliveryRow> | undefined>;
  /** Attempts of these deliveries, oldest first. */
  listWebhookAttempts(callbackIds: string[]): Promise<WebhookAttemptRow[]>;
}

export interface Tx extends ReadTx {
  insertUser(row: Omit<UserRow, 'id'>): Promise<UserRow>;
  updateUser(id: number, changes: { name?: string; email?: string }): Promise<void>;
  insertCompany(row: CompanyRow): Promise<void>;
  addCompanyMember(companyId: string, userId: number, role: string): Promise<void>;
  insertApiKey(row: ApiKeyRow): Promise<void>;
  /** Returns false when no such active key of the company exists. */
  revokeApiKey(companyId: string, keyId: string, atMs: number): Promise<boolean>;

  insertAccount(row: AccountRow): Promise<void>;
  updateAccount(row: AccountRow): Promise<void>;
  /** Inserts a zero balance; returns false when that balance already exists. */
  insertBalance(row: BalanceRow): Promise<boolean>;
  /**
   * Locks the balances (PostgreSQL: `SELECT … FOR UPDATE` in sorted key order) and returns
   * them. Missing keys are simply absent from the result.
   */
  lockBalances(keys: BalanceKey[]): Promise<BalanceRow[]>;
  /** `amount = amount + Δ, pending = pending + Δ` for each (already locked) balance; returns each changed balance once, as after every delta. */
  applyBalanceDeltas(deltas: BalanceDelta[]): Promise<BalanceRow[]>;
  upsertPrice(row: PriceRow): Promise<void>;

  insertEvents(rows: EventRow[]): Promise<void>;
  /**
   * Locks events for settling (PostgreSQL `FOR UPDATE`, in (company_id, event_id) order, so that
   * groups of settles never wait on each other in a cycle). Each event once, however often it
   * is named; missing ones are absent.
   */
  lockEvents(keys: EventKey[]): Promise<EventRow[]>;
  /** Sets the state, cost and updated_at of each event (expires_at cleared); each event at most once per call. */
  updateEvents(
    changes: { companyId: string; eventId: string; state: EventStateValue; costAmount: number; updatedAtMs: number }[],
  ): Promise<void>;
  insertTransactions(rows: TransactionRow[]): Promise<void>;
  /**
   * One posting: inserts `events`, applies `deltas` to their (already locked) balances as
   * `applyBalanceDeltas` does, and appends `transactions` in order; returns the balances changed,
   * as after. PostgreSQL runs it as one statement (the ingest path's whole write); SQLite as the
   * three steps.
   */
  writeLedger(events: EventRow[], deltas: BalanceDelta[], transactions: TransactionRow[]): Promise<BalanceRow[]>;
  insertOutbox(rows: OutboxRow[]): Promise<void>;
  /**
   * Claims up to `limit` due, unfinished outbox rows whose topic starts with `topicPrefix`
   * (run_at ≤ now, no live claim), oldest first, leasing them until `nowMs + leaseMs`.
   * Safe with many processes: PostgreSQL skips rows another transaction holds (SKIP LOCKED);
   * SQLite's single writer serialises claims.
   */
  claimOutbox(topicPrefix: string, nowMs: number, leaseMs: number, limit: number): Promise<ClaimedOutboxRow[]>;
  /** Marks a claimed row done. */
  completeOutbox(outboxId: string, nowMs: number): Promise<void>;
  /** Releases a claimed row to run again at `runAtMs`, remembering why it failed. */
  retryOutbox(outboxId: string, runAtMs: number, error: string | null): Promise<void>;
  /** Deletes up to `limit` rows finished before `doneBeforeMs`, oldest first; returns how many. */
  deleteFinishedOutbox(doneBeforeMs: number, limit: number): Promise<number>;

  /** Inserts the in-progress marker; returns false when the (scope, key) already exists. */
  claimIdempotency(row: IdempotencyRow): Promise<boolean>;
  completeIdempotency(scope: string, key: string, statusCode: number, responseBody: string): Promise<void>;
  releaseIdempotency(scope: string, key: string): Promise<void>;
  deleteIdempotencyBefore(createdBeforeMs: number): Promise<number>;

  // --- money movement
  upsertCard(row: CardRow): Promise<void>;
  /** Forgets the account's card (it belonged to a processor customer the account no longer has). */
  deleteCard(accountId: string): Promise<void>;
  insertCharges(rows: ChargeRow[]): Promise<void>;
  /** Locks one charge for settling (PostgreSQL `FOR UPDATE`; lock its balance first). */
  lockCharge(chargeId: string): Promise<ChargeRow | undefined>;
  updateCharge(chargeId: string, changes: ChargeChanges): Promise<void>;
  /** The account's charges waiting for a card, locked (PostgreSQL `FOR UPDATE`), oldest first. */
  lockChargesAwaitingCard(accountId: string): Promise<ChargeRow[]>;
  /** Replaces the refill settings and monthly schedule of a (locked) balance. */
  updateRefillSettings(accountId: string, denomination: string, s: RefillSettings): Promise<void>;
  /** Updates the refill bookkeeping of a (locked) balance; fields left out keep their values. */
  updateRefillState(
    accountId: string,
    denomination: string,
    s: {
      refillChargeId?: string | null;
      consecutiveDeclines?: number;
      autoRefillPaused?: boolean;
      nextRefillAtMs?: number | null;
    },
  ): Promise<void>;
  /**
   * Claims one balance whose monthly refill is due at `nowMs` and has no refill in flight,
   * locked until the transaction ends. PostgreSQL: `FOR UPDATE SKIP LOCKED`, so concurrent
   * workers take different balances; SQLite's single writer serialises them.
   */
  claimDueMonthlyRefill(nowMs: number): Promise<BalanceRow | undefined>;
  /** Marks a (locked) balance as a plan balance: included amount and alert percentage. */
  setPlanBalance(
    accountId: string,
    denomination: string,
    included: number,
    alertPercentage: string | null,
  ): Promise<void>;
  setPlanAlerted(accountId: string, denomination: string, alerted: boolean): Promise<void>;
  insertPlan(row: PlanRow): Promise<void>;
  insertAccountPlan(row: AccountPlanRow): Promise<void>;
  /** Claims one account whose plan period ends by `nowMs` (PostgreSQL `FOR UPDATE SKIP LOCKED`). */
  claimDuePlanRenewal(nowMs: number): Promise<AccountPlanRow | undefined>;
  updateAccountPlanPeriod(accountId: string, periodStartMs: number, nextRenewalAtMs: number): Promise<void>;
  // --- webhooks
  insertWebhookSubscription(row: WebhookSubscriptionRow): Promise<void>;
  /** Soft delete; returns false when the company has no such (undeleted) subscription. */
  deleteWebhookSubscription(companyId: string, webhookId: string, atMs: number): Promise<boolean>;
  /** Inserts deliveries; a `callbackId` that already exists is skipped (idempotent fan-out). */
  insertWebhookDeliveries(rows: WebhookDeliveryRow[]): Promise<void>;
  /** Replaces the body of a delivery written earlier in the same transaction (coalescing). */
  updateWebhookDeliveryPayload(callbackId: string, payload: string): Promise<void>;
  /**
   * Leases up to `limit` pending deliveries due at `nowMs` (injected clock) whose lease has
   * passed (`wallNowMs`, wall clock) until `wallNowMs + leaseMs`, oldest first. Safe with many
   * processes: PostgreSQL skips rows another transaction holds (SKIP LOCKED); SQLite's single
   * writer serialises claims. A leased delivery is never attempted by anyone else, so attempts
   * of one notification never overlap while the lease outlasts the attempt.
   */
  claimWebhookDeliveries(
    nowMs: number,
    wallNowMs: number,
    leaseMs: number,
    limit: number,
    claimToken: string,
  ): Promise<ClaimedWebhookDelivery[]>;
  /** Leases one delivery of the company whatever its status (manual retry); 'busy' while another sender holds it. */
  claimWebhookDelivery(
    companyId: string,
    callbackId: string,
    wallNowMs: number,
    leaseMs: number,
    claimToken: string,
  ): Promise<ClaimedWebhookDelivery | 'busy' | undefined>;
  /**
   * Appends the attempts and, where the claim is still the writer's (`claimToken`), sets the
   * outcome and releases the lease; disables subscriptions that answered 410.
   */
  recordWebhookDeliveries(updates: WebhookDeliveryUpdate[]): Promise<void>;
  /**
   * Deletes up to `limit` finished deliveries (delivered or failed) created before
   * `createdBeforeMs`, oldest first, with their attempts; one a sender holds (a live lease on
   * the wall clock, `wallNowMs`) stays. Returns how many deliveries went.
   */
  deleteWebhookDeliveriesBefore(createdBeforeMs: number, wallNowMs: number, limit: number): Promise<number>;
}

export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  /** Runs `fn` in one write transaction; retries it on serialization failures and deadlocks. */
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Runs `fn` on committed data, outside any write transaction. */
  read<T>(fn: (tx: ReadTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// --- webhooks
export type WebhookType = 'balance_change' | 'negative_balance' | 'auto_refill' | 'threshold';
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookSubscriptionRow {
  webhookId: string;
  companyId: string;
  type: WebhookType;
  url: string;
  /** Absolute units; only `threshold` subscriptions have one (null: plan alerts only). */
  threshold: number | null;
  /** `whsec_…`; shown to the company once, at creation. */
  secret: string;
  createdAtMs: number;
  deletedAtMs: number | null;
  disabledAtMs: number | null;
  disabledReason: string | null;
}

/** What the hot path needs to decide which notifications a balance change causes. */
export interface WebhookTarget {
  webhookId: string;
  companyId: string;
  type: WebhookType;
  threshold: number | null;
}

/** One notification to one subscription; `callbackId` is the `webhook-id` of every attempt. */
export interface WebhookDeliveryRow {
  callbackId: string;
  webhookId: string;
  companyId: string;
  type: WebhookType;
  /** The exact JSON body sent (and signed) on every attempt. */
  payload: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** Injected clock; null once no further automatic attempt is planned. */
  nextAttemptAtMs: number | null;
  createdAtMs: number;
  deliveredAtMs: number | null;
  lastError: string | null;
}

export interface WebhookAttemptRow {
  callbackId: string;
  attemptedAtMs: number;
  /** Null when no HTTP response arrived. */
  statusCode: number | null;
  latencyMs: number;
  responseSnippet: string;
  error: string | null;
  /** Sent by `POST /v1/webhooks/deliveries/{callback_id}/retry`. */
  manual: boolean;
}

/** A delivery leased to one sender, with what it needs to send it. */
export interface ClaimedWebhookDelivery extends WebhookDeliveryRow {
  claimToken: string;
  /** Wall clock: nobody else sends it before then. */
  claimedUntilMs: number;
  url: string;
  secret: string;
  subscriptionState: 'active' | 'disabled' | 'deleted';
}

/** The outcome of handling one claimed delivery, written back in one batch with others. */
export interface WebhookDeliveryUpdate {
  callbackId: string;
  claimToken: string;
  /** Absent when nothing was sent (the subscription was deleted or disabled meanwhile). */
  attempt: WebhookAttemptRow | null;
  status: WebhookDeliveryStatus;
  nextAttemptAtMs: number | null;
  deliveredAtMs: number | null;
  lastError: string | null;
  /** The receiver answered 410 Gone: stop sending to this subscription. */
  disable: { webhookId: string; atMs: number; reason: string } | null;
}
