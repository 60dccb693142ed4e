/**
 * Usage events: ingest, the pre-flight check, read and list, settle. The ingest path is the hot
 * one: a request is validated by its schema, queued by the group commit (src/ingest), and applied
 * together with every other request that arrived meanwhile, in ONE transaction with a handful of
 * statements for the whole group (ingestGroup, settleGroup); each request is still all-or-nothing,
 * and is answered only after the commit is durable. Ingest and the check are one plan
 * (ledger/ingest.ts planEvents): the events call posts it, the check answers with it.
 */
import { companyScopedKey, type IngestRequest, pricePeriodKey } from '../domain/events.js';
import { limitPassed, type PricePeriodCount, pricePeriodOf, takenBetween } from '../domain/ingest-plan.js';
import { releaseHold, settleHold as settleGrants } from '../domain/grants.js';
import { available, decideSettle, isHoldExpired } from '../domain/holds.js';
import { fail, failure, idempotencyKeyInUse, OutcomeError, type Failure, type Outcome } from '../domain/outcome.js';
import { eventCost, isPeriodPriced, type Price } from '../domain/pricing.js';
import { holdResolved } from '../domain/spend.js';
import { addDecimal, DECIMAL_ZERO, decimalFromNumber, type Decimal } from '../lib/decimal.js';
import { usageOf } from '../domain/usage.js';
import { parseRfc3339 } from '../domain/time.js';
import type { PostedEntry } from '../ledger/entries.js';
import { type IngestResult, planEvents } from '../ledger/ingest.js';
import { AccountOwners } from './account-owners.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Posting } from '../ledger/posting.js';
import type { EventFilter, EventRow, Page, PageResult, ReadTx, Tx } from '../store/types.js';
import type { EventState } from '../domain/holds.js';
import type { Deps } from './deps.js';
import { ownedAccount, unknownCursor } from './lookups.js';

/**
 * How the server applies an ingest request or a settle (group-committed with others), and answers a
 * pre-flight check (group-read with others): src/ingest/group-commits.ts.
 */
export interface EventWriters {
  ingest(req: IngestRequest): Promise<Outcome<IngestResult>>;
  settle(req: SettleRequest): Promise<Outcome<EventRow>>;
  check(req: IngestRequest): Promise<Outcome<CheckResult>>;
}

/**
 * Plans and writes a whole group in one transaction; returns each request's outcome in order. The
 * balances are locked (a posting, with what is due on them written first), then the periods of
 * graduated and package prices the group uses (none for unit prices); the plan is posted, with the
 * answers of the requests that carry an Idempotency-Key.
 */
export async function ingestGroup(
  ledger: Ledger,
  tx: Tx,
  nowMs: number,
  requests: IngestRequest[],
  owners: AccountOwners = new AccountOwners(),
): Promise<Outcome<IngestResult>[]> {
  let posting: Posting | undefined;
  const plan = await planEvents(tx, requests, nowMs, {
    owners: (ids) => owners.of(tx, ids),
    balances: async (keys) => {
      posting = await ledger.open(tx, keys, nowMs);
      return posting.balances;
    },
    periods: (keys) => tx.prices.lockPricePeriods(keys),
  });
  // Write: events, balances (atomic deltas), ledger rows and the usage rollup of the events recorded
  // complete (one statement on PostgreSQL); then the counts of the periods priced.
  await posting!.post(plan.entries, { events: plan.events, usage: plan.usage, leases: plan.leases });
  if (plan.counted.length > 0) await tx.prices.putPricePeriods(plan.counted);
  // The answers of the requests with an Idempotency-Key, in the same transaction as their events. A
  // request whose key was taken from it (its lease lapsed; a retry holds it now) must apply nothing: the
  // group is aborted, and the batcher writes it again in halves until that request fails alone.
  for (let i = 0; i < requests.length; i++) {
    const idem = requests[i]!.idempotency;
    if (!idem || !plan.outcomes[i]!.ok) continue;
    if (!(await tx.idempotency.completeIdempotency(idem.scope, idem.key, idem.owner, 200, idem.answer)))
      throw new OutcomeError(idempotencyKeyInUse());
  }
  return plan.outcomes;
}

/** What the events call would do with a request, said by the check. */
export interface CheckResult {
  allowed: boolean;
  /** Why not: a spend limit the request would pass, else a balance it would take below 0 available. */
  reason: 'spend_limit_reached' | 'insufficient_balance' | null;
  events: { index: number; cost: { amount: number; denomination: string | null } }[];
  balances: { denomination: string; available: number; availableAfter: number }[];
}

/**
 * Pre-flight checks, several in one read (the group read of checks): each is the events call's plan
 * (planEvents) of its request alone, on the balances as they are now (a view), writing nothing.
 * gate_on_balance does not refuse here: `allowed` says whether every balance drawn from would stay at
 * or above 0 available. A request the events call would refuse (400, 404, 409) is refused the same way.
 */
export async function checkGroup(
  ledger: Ledger,
  tx: ReadTx,
  nowMs: number,
  requests: IngestRequest[],
  owners: AccountOwners = new AccountOwners(),
): Promise<Outcome<CheckResult>[]> {
  // Copies written out, not spread: spreads on this path cost more than they should in the server's CPU profile
  // (docs/PERFORMANCE.md).
  const ungated = requests.map(
    (r): IngestRequest => ({
      companyId: r.companyId,
      accountId: r.accountId,
      eventIds: r.eventIds,
      gate: false,
      events: r.events.map((e) => {
        const { clientId, type, quantity, override, metadata, state, timestampMs, leaseId } = e;
        return { clientId, type, quantity, override, metadata, state, gate: false, timestampMs, leaseId };
      }),
    }),
  );
  const plan = await planEvents(
    tx,
    ungated,
    nowMs,
    {
      owners: (ids) => owners.of(tx, ids),
      balances: (keys) => ledger.view(tx, keys, nowMs),
      periods: (keys) => tx.prices.findPricePeriods(keys),
    },
    'each-alone',
  );
  return plan.outcomes.map((outcome, i): Outcome<CheckResult> => {
    if (!outcome.ok) return outcome;
    const drawn = plan.drawn[i]!;
    const balances = drawn.map((d) => ({
      denomination: d.key.slice(d.key.indexOf('\u0000') + 1),
      available: available(d.before.amount, d.before.pending),
      availableAfter: available(d.after.amount, d.after.pending),
    }));
    const limited = drawn.some((d) => limitPassed(d.before, takenBetween(d.before, d.after), nowMs) !== undefined);
    const reason = limited
      ? 'spend_limit_reached'
      : balances.some((b) => b.availableAfter < 0)
        ? 'insufficient_balance'
        : null;
    return {
      ok: true,
      value: {
        allowed: reason === null,
        reason,
        events: plan.plans[i]!.costs.map((cost, index) => ({ index, cost })),
        balances: balances.sort((a, b) =>
          a.denomination < b.denomination ? -1 : a.denomination > b.denomination ? 1 : 0,
        ),
      },
    };
  });
}

/** An event as it is now: a pending event whose hold has expired is cancelled first (its posting does it). */
export async function getEvent(deps: Deps, companyId: string, eventId: string): Promise<EventRow> {
  const now = deps.clock.now();
  const event = await deps.store.read((tx) => tx.events.findEvent(companyId, eventId));
  if (!event) fail('not_found', `no such event: ${eventId}`, 'event_id');
  if (event.state !== 'pending' || !isHoldExpired(event.expiresAtMs, now)) return event;
  return deps.store.write(async (tx) => {
    await deps.ledger.open(tx, [event], now);
    return (await tx.events.findEvent(companyId, eventId))!;
  });
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
 * balances, then takes only holds nobody has locked). An expired hold is cancelled first, when its
 * balance's posting is opened, and that cancellation is kept even when the settle is then refused
 * (409); repeating the state an event already has is a no-op. The group's ledger rows, balance
 * deltas and event updates are then written together, as ingest writes a group.
 */
export async function settleGroup(
  ledger: Ledger,
  tx: Tx,
  now: number,
  requests: SettleRequest[],
): Promise<Outcome<EventRow>[]> {
  const found = await tx.events.lockEvents(requests.map((r) => ({ companyId: r.companyId, eventId: r.eventId })));
  const events = new Map(found.map((e) => [companyScopedKey(e.companyId, e.eventId), e]));
  const p = await ledger.open(tx, found, now);
  for (const e of p.cancelled)
    events.set(companyScopedKey(e.companyId, e.eventId), {
      ...e,
      state: 'cancelled',
      updatedAtMs: now,
      expiresAtMs: null,
    });
  const settle: SettleContext = { ...(await repricingInputs(tx, requests, events)), counted: new Map(), now };
  const entries: PostedEntry[] = [];
  const changed = new Map<string, EventRow>();
  const outcomes = requests.map((r): Outcome<EventRow> => {
    const key = companyScopedKey(r.companyId, r.eventId);
    const event = events.get(key);
    if (!event) return failure('not_found', `no such event: ${r.eventId}`, 'event_id');
    const decided = settleOne(settle, event, r.input);
    if (!decided.ok || decided.value.entry === undefined) return decided.ok ? { ok: true, value: event } : decided;
    entries.push(decided.value.entry);
    events.set(key, decided.value.settled);
    changed.set(key, decided.value.settled);
    return { ok: true, value: decided.value.settled };
  });
  if (changed.size === 0) return outcomes;
  // An event settled to complete counts in the usage from now, at its final cost.
  const settled = [...changed.values()];
  await p.post(entries, {
    usage: usageOf(settled.filter((e) => e.state === 'complete')),
    eventChanges: settled.map((e) => ({
      companyId: e.companyId,
      eventId: e.eventId,
      state: e.state,
      costAmount: e.costAmount,
      priceModel: e.priceModel,
      updatedAtMs: now,
    })),
  });
  if (settle.counted.size > 0) await tx.prices.putPricePeriods([...settle.counted.values()]);
  return outcomes;
}

/** What the settles of a group price against, and the period counts they have moved so far. */
interface SettleContext {
  prices: Map<string, Price>;
  periods: Map<string, Decimal>;
  counted: Map<string, PricePeriodCount>;
  now: number;
}

/**
 * One settle of a locked event: refused, a no-op (no entry), or the entry that resolves its hold
 * and the event as settled. A completion repriced by a period price moves the period's count in `ctx`.
 */
function settleOne(
  ctx: SettleContext,
  event: EventRow,
  input: SettleInput,
): Outcome<{ entry?: PostedEntry; settled: EventRow }> {
  const requested = input.state === 'completed' ? 'complete' : input.state;
  const decision = decideSettle(event.state, requested);
  if (decision === 'noop') {
    // Repeating the state an event has is a no-op only with no final cost or the same one: a
    // different cost cannot be applied any more, and must not be silently ignored (contract).
    const o = input.cost_override;
    if (o && requested === 'complete' && (o.amount !== event.costAmount || o.denomination !== event.denomination)) {
      return failure(
        'event_completed_at_another_cost',
        `event ${event.eventId} is already complete at ${event.costAmount} ${event.denomination}; ` +
          'its cost cannot change',
        'cost_override',
      );
    }
    return { ok: true, value: { settled: event } };
  }
  if (decision === 'not_pending') return notPending(event);
  if (input.cost_override && input.cost_override.denomination !== event.denomination) {
    return failure(
      'cost_override_denomination_mismatch',
      `the event holds "${event.denomination}"; a final cost must be in the same denomination`,
      'cost_override.denomination',
    );
  }
  const priced = requested === 'complete' ? finalCostOf(ctx, event, input) : { ok: true as const, value: undefined };
  if (!priced.ok) return priced;
  const finalCost = priced.value?.cost ?? event.costAmount;
  const priceModel = priced.value ? priced.value.priceModel : event.priceModel;
  if (priced.value?.period) ctx.counted.set(pricePeriodKey(priced.value.period), priced.value.period);
  const heldFrom = event.heldFrom ?? [];
  const { now } = ctx;
  return {
    ok: true,
    value: {
      entry: {
        accountId: event.accountId,
        denomination: event.denomination,
        eventId: event.eventId,
        spend: holdResolved(
          event.costAmount,
          event.createdAtMs,
          requested === 'complete' ? finalCost : null,
          now,
          event.type,
        ),
        apply: (lots) =>
          requested === 'complete'
            ? settleGrants(lots, heldFrom, event.costAmount, finalCost, now)
            : releaseHold(lots, heldFrom, event.costAmount, now),
      },
      settled: { ...event, state: requested, costAmount: finalCost, priceModel, updatedAtMs: now, expiresAtMs: null },
    },
  };
}

/**
 * A completion's final cost when it is not the held one: the settle's cost_override, or the
 * price in force now against the period's count now for an event recorded under a period price
 * (contract); undefined: the held cost stands.
 */
function finalCostOf(
  ctx: SettleContext,
  event: EventRow,
  input: SettleInput,
): Outcome<{ cost: number; priceModel: EventRow['priceModel']; period?: PricePeriodCount } | undefined> {
  if (input.cost_override) return { ok: true, value: { cost: input.cost_override.amount, priceModel: null } };
  if (!repricedAtCompletion(event)) return { ok: true, value: undefined };
  const price = ctx.prices.get(companyScopedKey(event.companyId, event.type));
  if (!price || price.denomination !== event.denomination) return { ok: true, value: undefined };
  let before = DECIMAL_ZERO;
  let period: PricePeriodCount | undefined;
  if (isPeriodPriced(price.terms)) {
    const k = pricePeriodOf(event.companyId, event.accountId, event.type, event.occurredAtMs);
    before = ctx.counted.get(pricePeriodKey(k))?.quantity ?? ctx.periods.get(pricePeriodKey(k)) ?? DECIMAL_ZERO;
    period = { ...k, quantity: addDecimal(before, decimalFromNumber(event.quantity)!) };
  }
  const priced = eventCost(price.terms, before, event.quantity);
  if (!priced.ok) return priced;
  return { ok: true, value: { cost: priced.value, priceModel: price.terms.model, ...(period ? { period } : {}) } };
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
    for (const price of await tx.prices.findPrices(companyId, [...types]))
      prices.set(companyScopedKey(companyId, price.type), price);
  const keys = candidates
    .filter((e) => {
      const price = prices.get(companyScopedKey(e.companyId, e.type));
      return price !== undefined && price.denomination === e.denomination && isPeriodPriced(price.terms);
    })
    .map((e) => pricePeriodOf(e.companyId, e.accountId, e.type, e.occurredAtMs));
  return { prices, periods: keys.length > 0 ? await tx.prices.lockPricePeriods(keys) : new Map() };
}

function notPending(event: EventRow): Failure {
  return failure(
    'event_not_pending',
    `event ${event.eventId} is ${event.state}; only a pending event can be settled`,
    'state',
    { state: event.state },
  );
}

// ---------------------------------------------------------------------------------------
// Event lists

export interface EventListInput {
  account_id?: string;
  type?: string;
  state?: EventState;
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
  if (input.account_id !== undefined) filter.accountId = input.account_id;
  if (input.type !== undefined) filter.type = input.type;
  if (input.state !== undefined) filter.state = input.state;
  if (input.denomination !== undefined) filter.denomination = input.denomination;
  const fromMs = instant(input.from, 'from');
  const toMs = instant(input.to, 'to');
  if (fromMs !== undefined) filter.fromMs = fromMs;
  if (toMs !== undefined) filter.toMs = toMs;
  const now = deps.clock.now();
  const guard = async (tx: ReadTx) => {
    if (input.account_id !== undefined) await ownedAccount(tx, companyId, input.account_id);
  };
  if (input.state === undefined || input.state === 'pending') {
    if (input.account_id !== undefined) await deps.ledger.writeDue(deps.store, input.account_id, undefined, now, guard);
    else await deps.ledger.writeExpiredHolds(deps.store, now);
  }
  const result = await deps.store.read(async (tx) => {
    await guard(tx);
    return tx.events.listEvents(companyId, filter, page);
  });
  return result ?? unknownCursor();
}
