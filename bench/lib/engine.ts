/**
 * The bench's one seam into the engine: the only file under bench/ that imports from src/.
 * Everything else in bench/ reaches the engine through this module, and only through what it
 * exports, so that a change inside src/ (a schema, a store split into files, a renamed helper)
 * is a change here at most:
 *
 * - the store through its public interface (src/store/types.ts): `openStore`, `Store.write` /
 *   `Store.read` and the `Tx` methods, never a store's SQL, tables or classes;
 * - seeding in bulk through that interface and the server's own operations, so that seeded
 *   rows are the rows the server writes (ids, ledger rows, balance_after chains included):
 *   `seedCompany`; `seedFundedAccounts` (as `POST /v1/accounts`, an initial grant and
 *   `POST …/grants` write them); `planUsage` (complete events as the events route plans them, with their ledger
 *   rows), whose rows go in with `Tx.insertEvents` / `Tx.insertTransactions`, thousands per
 *   transaction, and `applyBalanceChanges` to bring the balances (and their grants) level with them;
 * - what single tools need: the ingest code and the balance effects of the store-only baseline
 *   (baselines/store.ts), PostgreSQL's own insert statements (pg-rows.ts), the webhook delivery
 *   job (webhooks.ts) and the pool size the server would use (run.ts).
 */
import { loadConfig } from '../../src/config.js';
import {
  balanceKey,
  normalizeEvent,
  type EventInput,
  type IngestRequest,
  type NormalizedEvent,
} from '../../src/domain/events.js';
import { planIngest, type IngestContext } from '../../src/domain/ingest-plan.js';
import type { Outcome } from '../../src/domain/outcome.js';
import { take } from '../../src/domain/grants.js';
import { refillAt } from '../../src/domain/monthly.js';
import { newId } from '../../src/lib/ids.js';
import type { PostedEntry } from '../../src/ledger/entries.js';
import { grantEntry } from '../../src/ledger/grants.js';
import type { IngestResult } from '../../src/ledger/ingest.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { AccountOwners } from '../../src/operations/account-owners.js';
import { ingestGroup } from '../../src/operations/events.js';
import type { EventRow, Store, TransactionRow, Tx } from '../../src/store/types.js';

/** Bench events carry no `timestamp`: no limit applies. */
export const ANY_TIME = { nowMs: 0, maxAgeMs: Number.POSITIVE_INFINITY };

export { normalizeEvent, type EventInput, type IngestRequest, type NormalizedEvent } from '../../src/domain/events.js';
export { systemClock } from '../../src/lib/clock.js';
export { newId } from '../../src/lib/ids.js';
export { ingestGroup };
export { bodyViolation } from '../../src/http/json-body.js';
// The growth seeder writes the usage rollups of its events as the ingest path does.
export { usageOf } from '../../src/domain/usage.js';
// The webhook bench builds the operations' dependencies by hand: the development email sender is one of them.
export { DevelopmentEmailSender } from '../../src/email/index.js';
export { openStore } from '../../src/store/open.js';
// Seeding writes a history's rows in bulk through the store's ledger port (what postings write).
export { portOf } from '../../src/ledger/port.js';
export type { EventRow, Store, TransactionRow, Tx, WebhookDeliveryRow } from '../../src/store/types.js';

// The store-only baseline composes the ledger the server composes (its balance effects), and the
// webhook bench the server's dependencies.
export { balanceEffects } from '../../src/compose.js';
export { Ledger as EngineLedger } from '../../src/ledger/ledger.js';
export { DAY_MS } from '../../src/domain/time.js';
export { EVENT_MAX_AGE_DAYS_DEFAULT, USAGE_RETENTION_DAYS_DEFAULT } from '../../src/config.js';

// bench/pg-rows.ts measures PostgreSQL's cost per row for the statements the store runs.
export {
  insertEventsStatement,
  insertTransactionsStatement,
  query as postgresQuery,
  writeLedgerStatement,
} from '../../src/store/postgres.js';

// bench/webhooks.ts drives the delivery job the server runs.
export { deliveryJob } from '../../src/jobs/webhooks.js';
export type { Deps } from '../../src/operations/deps.js';
export { processorFactory } from '../../src/processors/index.js';
export { SecretBox, newSecretKeyText, parseSecretKeys } from '../../src/lib/secret-box.js';
// The growth bench's test reads a seeded store through the real HTTP API, in process.
export { loadConfig } from '../../src/config.js';
export { startServer } from '../../src/server.js';
export { closeDeliveryAgents } from '../../src/webhooks/deliver.js';
export { notificationPayload } from '../../src/webhooks/notifications.js';
export { generateWebhookSecret } from '../../src/webhooks/signing.js';

/**
 * An events request as the events route submits it: each event with its id (the client's, else a
 * new one). Stable across builds, for tools that load several (group-cpu.ts).
 */
export function ingestRequest(
  companyId: string,
  accountId: string,
  events: NormalizedEvent[],
  gate = false,
): IngestRequest {
  return { companyId, accountId, events, eventIds: events.map((e) => e.clientId ?? newId('ev')), gate };
}

/**
 * How the server's group commit writes a group, in `tx`, remembering its accounts' owners as the server's does:
 * stable across builds, for tools that load several.
 */
export function groupWriter(
  ledger: Ledger,
): (tx: Tx, nowMs: number, requests: IngestRequest[]) => Promise<Outcome<IngestResult>[]> {
  const owners = new AccountOwners();
  return (tx, nowMs, requests) => ingestGroup(ledger, tx, nowMs, requests, owners);
}

/**
 * The PostgreSQL pool size a server started with `env` uses (`BILLING_PG_POOL_SIZE`, else its
 * default), read as the server reads it.
 */
export function serverPgPoolSize(env: NodeJS.ProcessEnv): number {
  return loadConfig({ ...env, PORT: '0', DATABASE_URL: 'sqlite::memory:' }).pgPoolSize;
}

/** A user and the company they own (sandbox processor), as sign-up writes them. Returns the company id. */
export async function seedCompany(store: Store, name: string, nowMs = Date.now()): Promise<string> {
  const companyId = newId('c');
  await store.write(async (tx) => {
    const user = await tx.identity.insertUser({
      name,
      email: `${companyId}@bench.example.com`,
      passwordHash: 'x',
      dateOfBirth: null,
      emailVerified: false,
      createdAtMs: nowMs,
    });
    await tx.identity.insertCompany({
      companyId,
      name,
      ownerUserId: user.id,
      processor: 'sandbox',
      processorApiKey: null,
      createdAtMs: nowMs,
    });
    await tx.identity.addCompanyMember(companyId, user.id, 'owner');
  });
  return companyId;
}

/**
 * A grant beside a balance's initial one, as `POST /v1/accounts/{id}/balance/{d}/grants` makes
 * it (source `grant`, effective now).
 */
export interface SeedGrant {
  amount: number;
  priority: number;
  category: 'promotional' | 'paid';
  /** USD cents per unit, a decimal string (paid grants only), else null. */
  costBasis: string | null;
  /** null: never expires. */
  expiresAtMs: number | null;
  name: string | null;
}

/** An account's override of a feature, as `PUT /v1/accounts/{id}/features/{key}` writes it. */
export interface SeedOverride {
  feature: string;
  enabled: boolean;
  /** config: the value as JSON text; else null. */
  value: string | null;
  /** null: until removed. */
  expiresAtMs: number | null;
}

/** What else `seedFundedAccounts` may be told. */
export interface SeedFunding {
  /** The initial grant's transaction reason (`initial grant`). */
  reason?: string;
  nowMs?: number;
  /** Grants each account's balance gets beside the initial one, in this order (none when absent). */
  grants?: (accountId: string, index: number) => readonly SeedGrant[];
  /**
   * The plan (an existing plan id of the company) each account is on, if any: the account row's `plan_id` and its
   * plan periods (`account_plans`, anchored now, next renewal a month ahead), which is what its plan's features
   * are read through. The plan's own balances and first charge are not written: a plan of the bench has one empty
   * balance of its own denomination and no charge, and nothing the bench reads uses them.
   */
  plan?: (accountId: string, index: number) => string | undefined;
  /** Each account's feature overrides (rows of `feature_overrides`; no notification: no webhook is subscribed). */
  overrides?: (accountId: string, index: number) => readonly SeedOverride[];
}

/**
 * Accounts of the company, each with a balance of `denomination` and, when `grant` > 0, an
 * `initial` grant of that amount (its `grant` transaction), then the grants `more.grants` gives
 * it: what `POST /v1/accounts`, `POST /v1/accounts/{id}/balance/{denomination} {amount}` and
 * `POST …/balance/{denomination}/grants` write, for all of them in `tx` (one posting: each
 * balance is written once, its grant rows inserted with it); with `more.plan` and
 * `more.overrides`, each on its plan (`POST /v1/accounts {plan_id}`, see SeedFunding.plan) and
 * with its overrides (`PUT /v1/accounts/{id}/features/{key}`).
 */
export async function seedFundedAccounts(
  tx: Tx,
  companyId: string,
  accountIds: readonly string[],
  denomination: string,
  grant: number,
  more: SeedFunding = {},
): Promise<void> {
  const nowMs = more.nowMs ?? Date.now();
  for (const [index, accountId] of accountIds.entries()) {
    const planId = more.plan?.(accountId, index);
    await tx.accounts.insertAccount({
      accountId,
      companyId,
      name: null,
      email: null,
      metadata: null,
      processorId: null,
      planId: planId ?? null,
      createdAtMs: nowMs,
    });
    if (planId !== undefined)
      await tx.plans.insertAccountPlan({
        accountId,
        companyId,
        planId,
        anchorAtMs: nowMs,
        periodStartMs: nowMs,
        nextRenewalAtMs: refillAt(nowMs, 1),
      });
    for (const o of more.overrides?.(accountId, index) ?? [])
      await tx.features.putOverride({ accountId, companyId, ...o, updatedAtMs: nowMs });
    await tx.balances.insertBalance({
      accountId,
      companyId,
      denomination,
      amount: 0,
      pending: 0,
      refillThreshold: null,
      refillAmount: null,
      refillUsdCents: null,
      refillOnDay: null,
      createdAtMs: nowMs,
    });
  }
  if (accountIds.length === 0) return;
  const keys = accountIds.map((accountId) => ({ accountId, denomination }));
  const entries: PostedEntry[] = [];
  for (const [index, k] of keys.entries()) {
    const owner = { ...k, companyId };
    if (grant > 0)
      entries.push(
        grantEntry(owner, { amount: grant, source: 'initial' }, nowMs, 'grant', more.reason ?? 'initial grant'),
      );
    for (const g of more.grants?.(k.accountId, index) ?? [])
      entries.push(grantEntry(owner, { ...g, source: 'grant', effectiveAtMs: nowMs }, nowMs, 'grant'));
  }
  if (entries.length === 0) return;
  // Seeded balances have no refill settings, plans or subscriptions: a ledger without effects.
  await (await new Ledger([]).open(tx, keys, nowMs)).post(entries);
}

/** A complete event of `cost` units (a cost override) on one account. */
export interface UsageEvent {
  accountId: string;
  type: string;
  cost: number;
  denomination: string;
}

/** A seeded history: rows for `Tx.insertEvents` and `Tx.insertTransactions`, in order. */
export interface PlannedUsage {
  events: EventRow[];
  transactions: TransactionRow[];
}

/**
 * The rows of complete events, in this order, each as its own 1-event request: the event rows
 * as the events route plans them (`planIngest`: the server's ids and columns) and their `usage`
 * ledger rows, `balance_after` chained from `amounts` as the ledger's `post` chains it. `amounts`
 * holds each account's amount before the events and is left at the amount after them.
 *
 * Nothing is written: insert the rows in bulk (`tx.insertEvents`, `tx.insertTransactions`; the
 * ledger rows of an account in this order, which their `seq` keeps), then change the balances
 * by the net amounts with `applyBalanceChanges`, once per balance for a whole history where
 * the server changes it with every group.
 */
export function planUsage(
  companyId: string,
  events: readonly UsageEvent[],
  amounts: Map<string, number>,
  nowMs = Date.now(),
): PlannedUsage {
  const balances = new Map<string, { amount: number; pending: number }>();
  for (const e of events) {
    const amount = amounts.get(e.accountId);
    if (amount === undefined) throw new Error(`planUsage: no amount given for account ${e.accountId}`);
    balances.set(balanceKey(e.accountId, e.denomination), { amount, pending: 0 });
  }
  const ctx: IngestContext = { nowMs, balances, prices: new Map(), periods: new Map(), known: new Map() };
  const normalized = new Map<string, NormalizedEvent>();
  const planned: PlannedUsage = { events: [], transactions: [] };
  for (const e of events) {
    const key = `${e.type}\u0000${e.cost}\u0000${e.denomination}`;
    let event = normalized.get(key);
    if (event === undefined) {
      const input: EventInput = { type: e.type, cost_override: { amount: e.cost, denomination: e.denomination } };
      const n = normalizeEvent(input, 0, ANY_TIME);
      if (!n.ok) throw new Error(`seeded event does not normalise: ${n.message}`);
      event = n.value;
      normalized.set(key, event);
    }
    const plan = planIngest(ingestRequest(companyId, e.accountId, [event]), ctx);
    if (!plan.ok) throw new Error(`seeded event refused: ${plan.reason}: ${plan.message}`);
    for (const row of plan.value.events) {
      planned.events.push({ ...row, heldFrom: null });
      if (row.costAmount === 0) continue;
      // A complete event's `usage` transaction, as the events route posts it.
      const balanceAfter = (amounts.get(row.accountId) as number) - row.costAmount;
      amounts.set(row.accountId, balanceAfter);
      planned.transactions.push({
        transactionId: newId('tx'),
        accountId: row.accountId,
        denomination: row.denomination,
        amount: -row.costAmount,
        balanceAfter,
        kind: 'usage',
        eventId: row.eventId,
        reason: null,
        grantId: null,
        drawnFrom: null,
        createdAtMs: nowMs,
      });
    }
  }
  return planned;
}

/**
 * Takes units from balances as a seeded history took them (its `usage` rows are written apart,
 * `planUsage`): each balance is locked, the units are drawn from its grants in drawing order
 * (domain/grants.ts `take`, as the events route draws them), and the balance is written with its
 * grants (a grant used up leaves the live lots and its row takes the final figures), so that
 * `amount` = Σ `remaining` − debt holds on the seeded store. No transaction is written here.
 * Checks that each balance ends where `expected` says, when given. Changes are ≤ 0: takings only.
 */
export async function applyBalanceChanges(
  tx: Tx,
  denomination: string,
  changes: readonly { accountId: string; amount: number; expected?: number }[],
  nowMs = Date.now(),
): Promise<void> {
  const deltas = changes.filter((c) => c.amount !== 0);
  if (deltas.length === 0) return;
  const positive = deltas.find((c) => c.amount > 0);
  if (positive !== undefined)
    throw new Error(`applyBalanceChanges takes units only: ${positive.accountId} would gain ${positive.amount}`);
  const keys = deltas.map((c) => ({ accountId: c.accountId, denomination }));
  const entries: PostedEntry[] = deltas.map((c) => ({
    accountId: c.accountId,
    denomination,
    apply: (lots) => {
      const step = take(lots, -c.amount, nowMs, 'usage');
      const other = step.transactions.find((t) => t.kind !== 'usage');
      // A start or expiry due now would need its own transaction: the seeded grants expire later.
      if (other !== undefined) throw new Error(`seeded history of ${c.accountId}: a ${other.kind} was due`);
      return { lots: step.lots, transactions: [] };
    },
  }));
  const posted = await (await new Ledger([]).open(tx, keys, nowMs)).post(entries);
  for (const c of deltas) {
    const amount = posted.balances.get(balanceKey(c.accountId, denomination))?.amount;
    if (c.expected !== undefined && amount !== c.expected)
      throw new Error(`balance of ${c.accountId}: ${amount} after the change, expected ${c.expected}`);
  }
}
