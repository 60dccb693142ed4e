/**
 * Usage events: ingest, read and list, settle, and the expiry of holds. The ingest path is the hot
 * one: a request is validated by its schema, queued by the group commit (src/ingest), and applied
 * together with every other request that arrived meanwhile, in ONE transaction with a handful of
 * statements for the whole group (ingestGroup, settleGroup); each request is still all-or-nothing,
 * and is answered only after the commit is durable.
 */
import {
  balanceKey,
  companyScopedKey,
  ingestAnswer,
  planIngest,
  pricePeriodKey,
  pricePeriodOf,
  pricePeriodsOf,
  type IngestContext,
  type IngestRequest,
  type KnownEvent,
  type NormalizedEvent,
  type PricePeriodCount,
  type PricePeriodKey,
} from '../domain/events.js';
import {
  advanceTo,
  type Draw,
  drawMany,
  type Lots,
  releaseHold,
  settleHold as settleGrants,
} from '../domain/grants.js';
import { available, decideSettle, isHoldExpired } from '../domain/holds.js';
import { fail, failure, idempotencyKeyInUse, OutcomeError, type Failure, type Outcome } from '../domain/outcome.js';
import { eventCost, isPeriodPriced, type Price } from '../domain/pricing.js';
import { addDecimal, DECIMAL_ZERO, decimalFromNumber, type Decimal } from '../lib/decimal.js';
import { usageOf } from '../domain/usage.js';
import { newId } from '../lib/ids.js';
import { parseRfc3339 } from '../domain/time.js';
import type {
  BalanceKey,
  EventFilter,
  EventRow,
  EventStateValue,
  Page,
  PageResult,
  ReadTx,
  Tx,
} from '../store/types.js';
import type { Deps } from './deps.js';
import { ownedAccount, unknownCursor } from './lookups.js';
import { lockBalanceMap, lotsOf, type Posting, type PostedEntry } from './ledger.js';

export interface IngestResult {
  eventIds: string[];
}

/** How the server applies an ingest request or a settle: group-committed with others (src/ingest). */
export interface EventWriters {
  ingest(req: IngestRequest): Promise<Outcome<IngestResult>>;
  settle(req: SettleRequest): Promise<Outcome<EventRow>>;
}

/** The completed quantity of each period, 0 where none is counted yet (no query when there is no period). */
async function periodCounts(
  keys: PricePeriodKey[],
  read: (keys: PricePeriodKey[]) => Promise<Map<string, Decimal>>,
): Promise<Map<string, Decimal>> {
  const counts = keys.length > 0 ? await read(keys) : new Map<string, Decimal>();
  for (const k of keys) if (!counts.has(pricePeriodKey(k))) counts.set(pricePeriodKey(k), DECIMAL_ZERO);
  return counts;
}

/** What planning a group needs from the store beside its balances: prices and known client ids. */
interface IngestInputs {
  prices: Map<string, Price>;
  known: Map<string, KnownEvent>;
}

/**
 * Steps 1 and 2 of ingest, the same for the events call and the check: which accounts exist and
 * whose they are (a foreign account is answered like a missing one, in `outcomes`), then the
 * prices and known client ids of each company, one query each for the whole group.
 */
async function loadIngestInputs<T>(
  tx: ReadTx,
  requests: IngestRequest[],
  outcomes: (Outcome<T> | undefined)[],
): Promise<IngestInputs> {
  const owners = new Map(
    (await tx.findAccountOwners([...new Set(requests.map((r) => r.accountId))])).map((o) => [o.accountId, o.companyId]),
  );
  requests.forEach((r, i) => {
    if (owners.get(r.accountId) !== r.companyId)
      outcomes[i] = failure('not_found', `no such account: ${r.accountId}`, 'account_id');
  });
  const prices = new Map<string, Price>();
  const known = new Map<string, KnownEvent>();
  for (const [companyId, reqs] of groupByCompany(requests, outcomes)) {
    const types = new Set<string>();
    const ids = new Set<string>();
    for (const r of reqs)
      for (const e of r.events) {
        if (!e.override) types.add(e.type);
        if (e.clientId !== null) ids.add(e.clientId);
      }
    for (const p of await tx.findPrices(companyId, [...types])) prices.set(companyScopedKey(companyId, p.type), p);
    for (const e of await tx.findEventsByIds(companyId, [...ids]))
      known.set(companyScopedKey(companyId, e.eventId), {
        accountId: e.accountId,
        contentHash: e.contentHash,
        denomination: e.denomination,
      });
  }
  return { prices, known };
}

/** The balances the group's events may draw from (an event without a price or override draws from none). */
function balanceKeysOf(
  requests: IngestRequest[],
  outcomes: (Outcome<unknown> | undefined)[],
  prices: Map<string, Price>,
): BalanceKey[] {
  const keys: BalanceKey[] = [];
  requests.forEach((r, i) => {
    if (outcomes[i]) return;
    for (const e of r.events) {
      const denomination = e.override?.denomination ?? prices.get(companyScopedKey(r.companyId, e.type))?.denomination;
      if (denomination !== undefined) keys.push({ accountId: r.accountId, denomination });
    }
  });
  return keys;
}

/** Plans and writes a whole group in one transaction; returns each request's outcome in order. */
export async function ingestGroup(p: Posting, requests: IngestRequest[]): Promise<Outcome<IngestResult>[]> {
  const { tx, nowMs } = p;
  const outcomes: (Outcome<IngestResult> | undefined)[] = new Array(requests.length);
  const { prices, known } = await loadIngestInputs(tx, requests, outcomes);

  // 3. Lock every balance the group may draw from, then cancel their expired holds. Only a
  // balance with something pending can have a hold to cancel: usually none has, and the group
  // saves that query (a round trip on PostgreSQL). Locking first waits for nothing new: a hold
  // another transaction has locked is skipped, as the sweeper's are.
  const keys = balanceKeysOf(requests, outcomes, prices);
  let locked = await p.lock(keys);
  const holding = [...locked.values()].filter((b) => b.pending !== 0);
  if (holding.length > 0 && (await expireHolds(p, holding)).length > 0) locked = await lockBalanceMap(tx, keys);
  // The periods of graduated and package prices, locked after the balances (as settles lock them):
  // none unless the group prices by one.
  const periodKeys = pricePeriodsOf(
    requests.filter((_, i) => !outcomes[i]),
    prices,
    nowMs,
  );
  const periods = await periodCounts(periodKeys, (keys) => tx.lockPricePeriods(keys));

  // 4. Plan each request against the running figures (all-or-nothing per request).
  const ctx: IngestContext = {
    nowMs,
    prices,
    periods,
    known,
    newEventId: () => newId('ev'),
    balances: new Map([...locked].map(([k, b]) => [k, { amount: b.amount, pending: b.pending }])),
  };
  const events: EventRow[] = [];
  const counted = new Map<string, PricePeriodCount>();
  requests.forEach((r, i) => {
    if (outcomes[i]) return;
    const planned = planIngest(r, ctx);
    if (!planned.ok) {
      outcomes[i] = planned;
      return;
    }
    for (const e of planned.value.events) events.push(e);
    for (const c of planned.value.periods) counted.set(pricePeriodKey(c), c);
    outcomes[i] = { ok: true, value: { eventIds: planned.value.eventIds } };
  });
  // Each event's cost from its balance's grants, in request order, one copy of each balance's grants per group:
  // a complete event takes it in drawing order; a pending one holds it there, and keeps which grants it holds
  // for its settle.
  type Drawing = { row: EventRow; draws: Draw[]; held: EventRow[] };
  const draws = new Map<string, Drawing>();
  let last: Drawing | undefined;
  for (const e of events) {
    if (e.costAmount === 0 || (e.state !== 'complete' && e.state !== 'pending')) continue;
    // A request's events mostly share one balance: its key is looked up once.
    let d =
      last !== undefined && last.row.accountId === e.accountId && last.row.denomination === e.denomination
        ? last
        : draws.get(balanceKey(e.accountId, e.denomination));
    if (d === undefined) {
      d = { row: e, draws: [], held: [] };
      draws.set(balanceKey(e.accountId, e.denomination), d);
    }
    last = d;
    const hold = e.state === 'pending';
    d.draws.push({ units: e.costAmount, hold, ref: e.eventId });
    if (hold) d.held.push(e);
  }
  const entries: PostedEntry[] = [];
  for (const d of draws.values())
    entries.push({
      accountId: d.row.accountId,
      denomination: d.row.denomination,
      apply: (lots) => {
        const step = drawMany(lots, d.draws, nowMs);
        let h = 0;
        d.draws.forEach((x, i) => {
          if (x.hold) d.held[h++]!.heldFrom = step.allocations[i]!;
        });
        return step;
      },
    });

  // 5. Write: events, balances (atomic deltas), ledger rows and the usage rollup of the events
  // recorded complete; one statement on PostgreSQL. Then the counts of the periods priced.
  await p.post(locked, entries, events, usageOf(events.filter((e) => e.state === 'complete')));
  if (counted.size > 0) await tx.putPricePeriods([...counted.values()]);
  // 6. The answers of the requests with an Idempotency-Key, in the same transaction as their events.
  // A request whose key was taken from it (its lease lapsed; a retry holds it now) must apply nothing:
  // the group is aborted, and the batcher writes it again in halves until that request fails alone.
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i]!;
    const o = outcomes[i]!;
    if (!r.idempotency || !o.ok) continue;
    const { scope, key, owner } = r.idempotency;
    const answer = JSON.stringify(ingestAnswer(r.events.length, o.value.eventIds));
    if (!(await tx.completeIdempotency(scope, key, owner, 200, answer))) throw new OutcomeError(idempotencyKeyInUse());
  }
  return outcomes as Outcome<IngestResult>[];
}

/** What the events call would do with a request, said by the check. */
export interface CheckResult {
  allowed: boolean;
  events: { index: number; cost: { amount: number; denomination: string | null } }[];
  balances: { denomination: string; available: number; availableAfter: number }[];
}

/**
 * The pre-flight check: plans the request exactly as ingest does (the same loading, the same
 * planIngest) on the state as it is now, in a read transaction that writes nothing. Expired holds
 * count as released, as ingest would release them first; gate_on_balance does not refuse here:
 * `allowed` says whether every balance drawn from would stay at or above 0 available.
 */
export async function checkIngest(deps: Deps, req: IngestRequest): Promise<CheckResult> {
  const nowMs = deps.clock.now();
  return deps.store.read(async (tx) => {
    const outcomes: (Outcome<unknown> | undefined)[] = [undefined];
    const { prices, known } = await loadIngestInputs(tx, [req], outcomes);
    const refused = outcomes[0];
    if (refused && !refused.ok) throw new OutcomeError(refused);
    const wanted = new Set(balanceKeysOf([req], outcomes, prices).map((k) => balanceKey(k.accountId, k.denomination)));
    // Each balance as a write would find it now: expired holds released, grant starts and expiries applied.
    const lots = new Map<string, Lots>();
    for (const b of await tx.listBalances(req.accountId)) {
      const key = balanceKey(b.accountId, b.denomination);
      if (wanted.has(key)) lots.set(key, lotsOf(b));
    }
    const holding = [...lots.entries()]
      .filter(([, l]) => l.pending !== 0)
      .map(([k]) => ({ accountId: req.accountId, denomination: k.slice(k.indexOf('\u0000') + 1) }));
    if (holding.length > 0)
      for (const e of await tx.findExpiredHolds(nowMs, EXPIRE_BATCH_MAX, holding)) {
        const key = balanceKey(e.accountId, e.denomination);
        lots.set(key, releaseHold(lots.get(key)!, e.heldFrom ?? [], e.costAmount, nowMs).lots);
      }
    const balances = new Map<string, { amount: number; pending: number }>();
    for (const [key, l] of lots) {
      const now = advanceTo(l, nowMs).lots;
      balances.set(key, { amount: now.amount, pending: now.pending });
    }
    const periodKeys = pricePeriodsOf([req], prices, nowMs);
    const periods = await periodCounts(periodKeys, (keys) => tx.findPricePeriods(keys));
    const before = new Map([...balances].map(([k, b]) => [k, available(b.amount, b.pending)]));
    const ctx: IngestContext = { nowMs, prices, periods, known, newEventId: () => 'ev_check', balances };
    const ungated = { ...req, gate: false, events: req.events.map((e) => ({ ...e, gate: false })) };
    const planned = planIngest(ungated, ctx);
    if (!planned.ok) throw new OutcomeError(planned);
    const drawn = planned.value.drawnFrom.map((key) => {
      const b = balances.get(key)!;
      return {
        denomination: key.slice(key.indexOf('\u0000') + 1),
        available: before.get(key)!,
        availableAfter: available(b.amount, b.pending),
      };
    });
    return {
      allowed: drawn.every((b) => b.availableAfter >= 0),
      events: planned.value.costs.map((cost, index) => ({ index, cost })),
      balances: drawn.sort((a, b) => (a.denomination < b.denomination ? -1 : a.denomination > b.denomination ? 1 : 0)),
    };
  });
}

function groupByCompany<T>(
  requests: IngestRequest[],
  outcomes: (Outcome<T> | undefined)[],
): Map<string, IngestRequest[]> {
  const by = new Map<string, IngestRequest[]>();
  requests.forEach((r, i) => {
    if (outcomes[i]) return;
    const list = by.get(r.companyId) ?? [];
    list.push(r);
    by.set(r.companyId, list);
  });
  return by;
}

export async function getEvent(deps: Deps, companyId: string, eventId: string): Promise<EventRow> {
  const now = deps.clock.now();
  let event = await deps.store.read((tx) => tx.findEvent(companyId, eventId));
  if (!event) fail('not_found', `no such event: ${eventId}`, 'event_id');
  if (event.state === 'pending' && isHoldExpired(event.expiresAtMs, now)) {
    event = await deps.store.write(async (tx) => {
      await expireHolds(deps.ledger.begin(tx, now), [
        { accountId: event!.accountId, denomination: event!.denomination },
      ]);
      return (await tx.findEvent(companyId, eventId))!;
    });
  }
  return event;
}

export interface SettleInput {
  state: 'complete' | 'completed' | 'cancelled';
  cost_override?: { amount: number; denomination: string };
}

export interface SettleRequest {
  companyId: string;
  eventId: string;
  input: SettleInput;
}

/**
 * Settles pending events, several in one transaction, each all or nothing and in order (a later
 * settle of the same event sees the earlier one). Every event of the group is locked first, then
 * every balance they hold from, each set in sorted order on PostgreSQL: so concurrent groups never
 * wait on each other in a cycle (the sweeper also locks an event before its balance; ingest locks
 * balances, then takes only holds nobody has locked). An expired hold is cancelled first, and that
 * cancellation is kept even when the settle is then refused (409); repeating the state an event
 * already has is a no-op. The group's ledger rows, balance deltas and event updates are then
 * written together, as ingest writes a group.
 */
export async function settleGroup(p: Posting, requests: SettleRequest[]): Promise<Outcome<EventRow>[]> {
  const { tx, nowMs: now } = p;
  const found = await tx.lockEvents(requests.map((r) => ({ companyId: r.companyId, eventId: r.eventId })));
  const events = new Map(found.map((e) => [companyScopedKey(e.companyId, e.eventId), e]));
  let locked = await p.lock(found);
  const expired = found.filter((e) => e.state === 'pending' && isHoldExpired(e.expiresAtMs, now));
  if (expired.length > 0) {
    await cancelHolds(p, expired);
    for (const e of expired)
      events.set(companyScopedKey(e.companyId, e.eventId), {
        ...e,
        state: 'cancelled',
        updatedAtMs: now,
        expiresAtMs: null,
      });
    locked = await lockBalanceMap(tx, found);
  }

  const { prices, periods } = await repricingInputs(tx, requests, events);
  const counted = new Map<string, PricePeriodCount>();
  const entries: PostedEntry[] = [];
  const changed = new Map<string, EventRow>();
  const outcomes = requests.map(({ companyId, eventId, input }): Outcome<EventRow> => {
    const key = companyScopedKey(companyId, eventId);
    const event = events.get(key);
    if (!event) return failure('not_found', `no such event: ${eventId}`, 'event_id');
    const requested = input.state === 'completed' ? 'complete' : input.state;
    const decision = decideSettle(event.state, requested);
    if (decision === 'noop') {
      // Repeating the state an event has is a no-op only with no final cost or the same one: a
      // different cost cannot be applied any more, and must not be silently ignored (contract).
      const o = input.cost_override;
      if (o && requested === 'complete' && (o.amount !== event.costAmount || o.denomination !== event.denomination)) {
        return failure(
          'event_completed_at_another_cost',
          `event ${eventId} is already complete at ${event.costAmount} ${event.denomination}; its cost cannot change`,
          'cost_override',
        );
      }
      return { ok: true, value: event };
    }
    if (decision === 'not_pending') return notPending(event);
    if (input.cost_override && input.cost_override.denomination !== event.denomination) {
      return failure(
        'cost_override_denomination_mismatch',
        `the event holds "${event.denomination}"; a final cost must be in the same denomination`,
        'cost_override.denomination',
      );
    }
    let finalCost = event.costAmount;
    let priceModel = event.priceModel;
    let period: PricePeriodCount | null = null;
    if (requested === 'complete' && input.cost_override) {
      finalCost = input.cost_override.amount;
      priceModel = null;
    } else if (requested === 'complete' && repricedAtCompletion(event)) {
      // Priced again by the price in force now, against the period's count now (contract).
      const price = prices.get(companyScopedKey(companyId, event.type));
      if (price && price.denomination === event.denomination) {
        let before = DECIMAL_ZERO;
        if (isPeriodPriced(price.terms)) {
          const k = pricePeriodOf(companyId, event.accountId, event.type, event.occurredAtMs);
          before = counted.get(pricePeriodKey(k))?.quantity ?? periods.get(pricePeriodKey(k)) ?? DECIMAL_ZERO;
          period = { ...k, quantity: addDecimal(before, decimalFromNumber(event.quantity)!) };
        }
        const priced = eventCost(price.terms, before, event.quantity);
        if (!priced.ok) return priced;
        finalCost = priced.value;
        priceModel = price.terms.model;
      }
    }
    if (period) counted.set(pricePeriodKey(period), period);
    const heldFrom = event.heldFrom ?? [];
    entries.push({
      accountId: event.accountId,
      denomination: event.denomination,
      eventId,
      apply: (lots) =>
        requested === 'complete'
          ? settleGrants(lots, heldFrom, event.costAmount, finalCost, now)
          : releaseHold(lots, heldFrom, event.costAmount, now),
    });
    const settled: EventRow = {
      ...event,
      state: requested,
      costAmount: finalCost,
      priceModel,
      updatedAtMs: now,
      expiresAtMs: null,
    };
    events.set(key, settled);
    changed.set(key, settled);
    return { ok: true, value: settled };
  });

  if (changed.size > 0) {
    // An event settled to complete counts in the usage from now, at its final cost.
    await p.post(locked, entries, [], usageOf([...changed.values()].filter((e) => e.state === 'complete')));
    await tx.updateEvents(
      [...changed.values()].map((e) => ({
        companyId: e.companyId,
        eventId: e.eventId,
        state: e.state,
        costAmount: e.costAmount,
        priceModel: e.priceModel,
        updatedAtMs: now,
      })),
    );
    if (counted.size > 0) await tx.putPricePeriods([...counted.values()]);
  }
  return outcomes;
}

/** A pending event recorded under a graduated or package price is priced again when it completes. */
function repricedAtCompletion(event: EventRow): boolean {
  return event.state === 'pending' && (event.priceModel === 'graduated' || event.priceModel === 'package');
}

/**
 * The prices, and the locked period counts, that the group's completions will be priced against:
 * only for events that are repriced (none, in a group of unit-priced or overridden settles).
 */
async function repricingInputs(
  tx: Tx,
  requests: SettleRequest[],
  events: Map<string, EventRow>,
): Promise<{ prices: Map<string, Price>; periods: Map<string, Decimal> }> {
  const prices = new Map<string, Price>();
  const byCompany = new Map<string, Set<string>>();
  const candidates: EventRow[] = [];
  for (const r of requests) {
    const event = events.get(companyScopedKey(r.companyId, r.eventId));
    if (!event || r.input.state === 'cancelled' || r.input.cost_override || !repricedAtCompletion(event)) continue;
    candidates.push(event);
    const types = byCompany.get(r.companyId) ?? new Set<string>();
    types.add(event.type);
    byCompany.set(r.companyId, types);
  }
  for (const [companyId, types] of byCompany)
    for (const price of await tx.findPrices(companyId, [...types]))
      prices.set(companyScopedKey(companyId, price.type), price);
  const keys = candidates
    .filter((e) => {
      const price = prices.get(companyScopedKey(e.companyId, e.type));
      return price !== undefined && price.denomination === e.denomination && isPeriodPriced(price.terms);
    })
    .map((e) => pricePeriodOf(e.companyId, e.accountId, e.type, e.occurredAtMs));
  return { prices, periods: keys.length > 0 ? await tx.lockPricePeriods(keys) : new Map() };
}

function notPending(event: EventRow): Failure {
  return failure(
    'event_not_pending',
    `event ${event.eventId} is ${event.state}; only a pending event can be settled`,
    'state',
    { state: event.state },
  );
}

export type { NormalizedEvent };

// ---------------------------------------------------------------------------------------
// Holds that outlive their hour are cancelled: by the sweeper job, by a read of the balance,
// by ingest before it gates on a balance, and by settling an expired event.

/** Most holds one sweep transaction cancels; the sweeper loops until none are due. */
export const EXPIRE_BATCH_MAX = 1000;

/** Cancels expired holds (of `only` balances, or any); returns the events cancelled. */
export async function expireHolds(p: Posting, only?: BalanceKey[]): Promise<EventRow[]> {
  const expired = await p.tx.findExpiredHolds(p.nowMs, EXPIRE_BATCH_MAX, only);
  if (expired.length === 0) return [];
  await cancelHolds(p, expired);
  return expired;
}

/** Releases the holds of these (locked, pending) events and marks them cancelled. */
export async function cancelHolds(p: Posting, events: EventRow[]): Promise<void> {
  const { tx, nowMs } = p;
  const locked = await p.lock(events);
  await p.post(
    locked,
    events.map((e) => ({
      accountId: e.accountId,
      denomination: e.denomination,
      eventId: e.eventId,
      apply: (lots) => releaseHold(lots, e.heldFrom ?? [], e.costAmount, nowMs),
    })),
  );
  await tx.updateEvents(
    events.map((e) => ({
      companyId: e.companyId,
      eventId: e.eventId,
      state: 'cancelled' as const,
      costAmount: e.costAmount,
      priceModel: e.priceModel,
      updatedAtMs: nowMs,
    })),
  );
}

/**
 * Applies what is due on the account's balances (of one balance, or all), if anything is: expired
 * holds are cancelled and grant starts and expiries applied, so that a read sees none left due.
 */
export async function applyDueOfAccount(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination?: string,
): Promise<void> {
  const now = deps.clock.now();
  const balancesOf = async (tx: ReadTx) =>
    denomination !== undefined
      ? [await tx.findBalance(accountId, denomination)].filter((b) => b !== undefined)
      : await tx.listBalances(accountId);
  const due = await deps.store.read(async (tx) => {
    const account = await tx.findAccount(companyId, accountId);
    if (!account) return false;
    const balances = await balancesOf(tx);
    if (balances.some((b) => b.grantsDueAtMs !== null && b.grantsDueAtMs <= now)) return true;
    return (await tx.findExpiredHolds(now, 1, balances)).length > 0;
  });
  if (!due) return;
  await deps.store.write(async (tx) => {
    const keys = (await balancesOf(tx)).map((b) => ({ accountId, denomination: b.denomination }));
    const p = deps.ledger.begin(tx, now);
    await p.lock(keys);
    await expireHolds(p, keys);
  });
}

// ---------------------------------------------------------------------------------------
// Event lists

export interface EventListInput {
  account_id?: string;
  type?: string;
  state?: EventStateValue;
  denomination?: string;
  from?: string;
  to?: string;
}

function instant(text: string | undefined, param: 'from' | 'to'): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseRfc3339(text);
  if (ms === null) fail('invalid_timestamp', `${param} must be an RFC 3339 date-time`, param);
  return ms;
}

/**
 * Events newest first, of the company or of one account. Holds that expired are cancelled first
 * (as every read does), so a listed pending event is still holding.
 */
export async function listEvents(
  deps: Deps,
  companyId: string,
  input: EventListInput,
  page: Page,
): Promise<PageResult<EventRow>> {
  const filter: EventFilter = {};
  if (input.account_id !== undefined) {
    await deps.store.read((tx) => ownedAccount(tx, companyId, input.account_id!));
    filter.accountId = input.account_id;
  }
  if (input.type !== undefined) filter.type = input.type;
  if (input.state !== undefined) filter.state = input.state;
  if (input.denomination !== undefined) filter.denomination = input.denomination;
  const fromMs = instant(input.from, 'from');
  const toMs = instant(input.to, 'to');
  if (fromMs !== undefined) filter.fromMs = fromMs;
  if (toMs !== undefined) filter.toMs = toMs;
  if (input.state === undefined || input.state === 'pending') {
    if (filter.accountId !== undefined) await applyDueOfAccount(deps, companyId, filter.accountId);
    else {
      const now = deps.clock.now();
      if ((await deps.store.read((tx) => tx.findExpiredHolds(now, 1))).length > 0)
        await deps.store.write((tx) => expireHolds(deps.ledger.begin(tx, now)));
    }
  }
  const result = await deps.store.read((tx) => tx.listEvents(companyId, filter, page));
  return result ?? unknownCursor();
}
