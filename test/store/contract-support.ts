/**
 * What the contract test files (test/store/*.contract.test.ts) share: the server's ledger, rows built with defaults,
 * ingest requests of normalised events, a balance's whole ledger read from committed data, and (PostgreSQL) a
 * transaction held open while another is seen to end or to wait for its row locks.
 */
import assert from 'node:assert/strict';
import { normalizeEvent, type EventInput, type IngestRequest, type NormalizedEvent } from '../../src/domain/events.js';
import { newId } from '../../src/lib/ids.js';
import { balanceEffects } from '../../src/compose.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { DevelopmentEmailSender } from '../../src/email/index.js';
import type { Clock } from '../../src/lib/clock.js';
import type { Deps } from '../../src/operations/deps.js';
import { processorFactory } from '../../src/processors/index.js';
import type { AccountRow, EventRow, Store, TransactionRow } from '../../src/store/types.js';
import { testSecretBox, type TestStore } from '../support/stores.js';
import { until } from '../support/wait.js';

/** Requests here carry no `timestamp`: no limit applies. */
const ANY_TIME = { nowMs: 0, maxAgeMs: Number.POSITIVE_INFINITY };

export const T0 = 1_700_000_000_000;

/** The server's ledger, with its balance effects (refill decisions, plan alerts, notifications). */
export const ledger = new Ledger(balanceEffects());

/** The operations' dependencies over a test store: sandbox processors, test keys, email to nowhere. */
export function testDeps(store: Store, clock: Clock): Deps {
  return {
    store,
    clock,
    processors: processorFactory(),
    ledger,
    webhooks: { allowPrivate: false },
    usage: { eventMaxAgeMs: 35 * 86_400_000, retentionMs: 400 * 86_400_000 },
    secrets: testSecretBox(),
    identity: { publicUrl: 'http://127.0.0.1', sessionIdleMs: 3_600_000, email: new DevelopmentEmailSender(() => {}) },
  };
}

export function eventRow(companyId: string, accountId: string, over: Partial<EventRow> = {}): EventRow {
  return {
    eventId: newId('ev'),
    companyId,
    accountId,
    clientSupplied: false,
    type: 'api_call',
    quantity: 1,
    costAmount: 1,
    denomination: 'credits',
    priceModel: 'unit',
    metadata: null,
    state: 'complete',
    contentHash: null,
    occurredAtMs: T0,
    createdAtMs: T0,
    updatedAtMs: T0,
    expiresAtMs: null,
    heldFrom: null,
    leaseId: null,
    ...over,
  };
}

export function txRow(
  accountId: string,
  denomination: string,
  amount: number,
  balanceAfter: number,
  over: Partial<TransactionRow> = {},
): TransactionRow {
  return {
    transactionId: newId('tx'),
    accountId,
    denomination,
    amount,
    balanceAfter,
    kind: 'adjustment',
    eventId: null,
    grantId: null,
    drawnFrom: null,
    reason: null,
    createdAtMs: T0,
    ...over,
  };
}

export function accountRow(companyId: string, over: Partial<AccountRow> = {}): AccountRow {
  return {
    accountId: newId('a'),
    companyId,
    name: null,
    email: null,
    metadata: null,
    processorId: null,
    planId: null,
    createdAtMs: T0,
    ...over,
  };
}

function norm(input: EventInput, index = 0): NormalizedEvent {
  const n = normalizeEvent(input, index, ANY_TIME);
  assert.ok(n.ok, 'test event must normalise');
  return n.value;
}

export function request(companyId: string, accountId: string, events: EventInput[], gate = false): IngestRequest {
  const normalized = events.map((e, i) => norm(e, i));
  return { companyId, accountId, events: normalized, eventIds: normalized.map((e) => e.clientId ?? newId('ev')), gate };
}

export const sortStrings = (xs: string[]) => [...xs].sort();

/** Everything the ledger says about one balance, from committed data. */
export async function balanceState(store: Store, accountId: string, denomination: string) {
  return store.read(async (tx) => {
    const b = await tx.balances.findBalance(accountId, denomination);
    const txs: TransactionRow[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await tx.transactions.listTransactions(accountId, denomination, {
        limit: 100,
        startingAfter: cursor,
      });
      assert.ok(page);
      txs.push(...page.rows);
      if (!page.hasMore) break;
      cursor = page.rows.at(-1)!.transactionId;
    }
    return { balance: b!, transactions: txs };
  });
}

/** A promise and its resolve, for a transaction that must stay open until the test lets it end. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * PostgreSQL row locks seen from outside: waits until `work` (begun in another transaction while one holds rows of
 * `table`) has ended, with its value, or waits for a lock, as a session of this store's schema that uses `table`
 * (`waits`). A condition decides it, never a time: the wrong outcome shows at once instead of hanging the test.
 */
export async function endsOrWaits<T>(t: TestStore, table: string, work: Promise<T>): Promise<{ value: T } | 'waits'> {
  let ended: { value: T } | { error: unknown } | undefined;
  work.then(
    (value) => {
      ended = { value };
    },
    (error: unknown) => {
      ended = { error };
    },
  );
  const outcome = await until(`a statement on ${table} ends or waits for a lock`, async () => {
    if (ended) return ended;
    const waiting = await t.query(
      'SELECT 1 AS waiting FROM pg_locks w WHERE NOT w.granted AND w.pid IN ' +
        '(SELECT pid FROM pg_locks WHERE relation = ?::regclass)',
      [table],
    );
    return waiting.length > 0 ? ('waits' as const) : undefined;
  });
  if (outcome !== 'waits' && 'error' in outcome) throw outcome.error;
  return outcome;
}
