/**
 * The plan of one events request (planIngest): every event priced (its cost_override, or its
 * type's price, a period price against the period's count), its balance found, client-id repeats
 * resolved, gate_on_balance applied; all or nothing, against running figures that the next request
 * of a group sees. Pure: the ledger (src/ledger/ingest.ts) loads what it reads and posts what it plans.
 */
import { toIso } from '../lib/clock.js';
import { balanceKey, companyScopedKey, pricePeriodKey } from '../lib/keys.js';
import { DECIMAL_ZERO, decimalFromNumber, type Decimal } from '../lib/decimal.js';
import { type EventRow, eventContentHash, type IngestRequest, type NormalizedEvent } from './events.js';
import { HOLD_DURATION_MS, available } from './holds.js';
import { coveredBy } from './leases.js';
import { AMOUNT_MAX } from './money.js';
import { failure, type Failure, type Outcome, type Reason } from './outcome.js';
import {
  eventCost,
  isPeriodPriced,
  periodEventCost,
  type PeriodCeiling,
  type Price,
  type PriceModel,
} from './pricing.js';
import { applySpend, hasLimit, type LimitBreach, limitBreach, type SpendLimits, type SpendWindows } from './spend.js';
import { monthStart } from './time.js';

export interface BalanceFigures {
  amount: number;
  pending: number;
  /** The balance's spend windows and limits (domain/spend.ts); absent: no limit applies (a test's figures). */
  spend?: SpendWindows;
  limits?: SpendLimits;
}

export interface KnownEvent {
  accountId: string;
  contentHash: string | null;
  denomination: string;
}

/** One period of a graduated or package price: an account's events of one type in one UTC month. */
export interface PricePeriodKey {
  companyId: string;
  accountId: string;
  type: string;
  /** The start of the UTC calendar month (epoch ms). */
  periodMs: number;
}

/** The period an event of `type` that happened at `occurredAtMs` counts in. */
export function pricePeriodOf(
  companyId: string,
  accountId: string,
  type: string,
  occurredAtMs: number,
): PricePeriodKey {
  return { companyId, accountId, type, periodMs: monthStart(occurredAtMs) };
}

/**
 * The price periods a group of requests may price against: those of its events without a
 * cost_override whose type has a graduated or package price (pending ones too: they hold what
 * they would cost now). Loaded (and locked) before planning.
 */
export function pricePeriodsOf(
  requests: { companyId: string; accountId: string; events: NormalizedEvent[] }[],
  prices: Map<string, Price>,
  nowMs: number,
): PricePeriodKey[] {
  const keys = new Map<string, PricePeriodKey>();
  for (const r of requests)
    for (const e of r.events) {
      if (e.override || e.state === 'cancelled') continue;
      const price = prices.get(companyScopedKey(r.companyId, e.type));
      if (!price || !isPeriodPriced(price.terms)) continue;
      const k = pricePeriodOf(r.companyId, r.accountId, e.type, e.timestampMs ?? nowMs);
      keys.set(pricePeriodKey(k), k);
    }
  return [...keys.values()];
}

/** A period's completed quantity after a request: the absolute figure to write. */
export interface PricePeriodCount extends PricePeriodKey {
  quantity: Decimal;
}

/** What the ingest operation loaded (under lock) for a group of requests; updated as requests are planned. */
export interface IngestContext {
  nowMs: number;
  /** False: spend limits do not refuse (the check, which reports them: limitPassed). */
  enforceLimits?: boolean;
  balances: Map<string, BalanceFigures>;
  prices: Map<string, Price>;
  /** Completed quantity of each loaded price period (pricePeriodKey), 0 for one with none yet. */
  periods: Map<string, Decimal>;
  /**
   * ceil(C(quantity)) last computed for a period (pricePeriodKey), so that its next event computes C once;
   * used only when its quantity is the period's (created by planIngest when absent).
   */
  ceilings?: Map<string, PeriodCeiling>;
  known: Map<string, KnownEvent>;
  /** The leases the group's events name, by lease id (absent: no such lease), their remaining as planned so far. */
  leases?: Map<string, LeaseFigures>;
}

/** What planning reads of a lease (domain/leases.ts). */
export interface LeaseFigures {
  companyId: string;
  accountId: string;
  denomination: string;
  /** Open at the plan's instant: events naming it draw from it (else they are charged to the balance alone). */
  open: boolean;
  remaining: number;
}

export interface IngestPlan {
  eventIds: string[];
  /** Each event's cost, by its index in the request (a repeated client id deducts nothing: 0). */
  costs: { amount: number; denomination: string | null }[];
  /** The price periods this request counted in, with their new completed quantities. */
  periods: PricePeriodCount[];
  /** The balances (balanceKey) the request draws from or holds on. */
  drawnFrom: string[];
  events: EventRow[];
  /** Net change per balance key (the grants posting makes the transactions: operations/events.ts). */
  deltas: Map<string, BalanceFigures>;
  /** The units each lease covers of the request's events, by lease id. */
  leaseUse: Map<string, number>;
}

function eventFailure(reason: Reason, message: string, index: number): Failure {
  return failure(reason, `events[${index}]: ${message}`, `events[${index}]`, { index });
}

/** What an event costs, and in what, by the price it names or its cost_override. */
interface Priced {
  cost: number;
  denomination: string;
  priceModel: PriceModel | null;
}

/**
 * Prices event `i` of `req`: its cost_override, or its type's price (a period price against the
 * period's count, as `periods` has moved it in this request so far: a completed event moves it).
 */
function priceEvent(
  req: IngestRequest,
  e: NormalizedEvent,
  i: number,
  occurredAtMs: number,
  ctx: IngestContext,
  periods: Map<string, PricePeriodCount>,
): Outcome<Priced> {
  if (e.override)
    return { ok: true, value: { cost: e.override.amount, denomination: e.override.denomination, priceModel: null } };
  const price = ctx.prices.get(companyScopedKey(req.companyId, e.type));
  if (!price)
    return eventFailure(
      'no_price_for_event_type',
      `no cost_override and no price for type "${e.type}" (set one with PUT /v1/prices/{type})`,
      i,
    );
  const priced = { denomination: price.denomination, priceModel: price.terms.model };
  if (!isPeriodPriced(price.terms) || e.state === 'cancelled') {
    const unit = eventCost(price.terms, DECIMAL_ZERO, e.quantity);
    if (!unit.ok) return eventFailure(unit.reason, unit.message, i);
    return { ok: true, value: { ...priced, cost: unit.value } };
  }
  const period = pricePeriodOf(req.companyId, req.accountId, e.type, occurredAtMs);
  const key = pricePeriodKey(period);
  const count = periods.get(key)?.quantity ?? ctx.periods.get(key);
  if (count === undefined) throw new Error(`price period ${key} was not loaded`);
  if (!ctx.ceilings) ctx.ceilings = new Map();
  const ceilings = ctx.ceilings;
  const cost = periodEventCost(price.terms, count, decimalFromNumber(e.quantity)!, ceilings.get(key));
  if (!cost.ok) return eventFailure(cost.reason, cost.message, i);
  // Only a completed event counts; a pending one holds what it would cost now.
  if (e.state === 'complete') {
    periods.set(key, { ...period, quantity: cost.value.after.quantity });
    ceilings.set(key, cost.value.after);
  }
  return { ok: true, value: { ...priced, cost: cost.value.cost } };
}

/** What a request has planned so far: all of it applied to the context, or none, once every event passed. */
interface Planning {
  eventIds: string[];
  costs: IngestPlan['costs'];
  events: EventRow[];
  deltas: Map<string, BalanceFigures>;
  seenInRequest: Map<string, { hash: string; denomination: string | null }>;
  drawnFrom: Set<string>;
  /** The periods this request counts in: applied to ctx only if the whole request is accepted. */
  periods: Map<string, PricePeriodCount>;
  /** The units each open lease covers: taken from ctx's leases only if the whole request is accepted. */
  leaseUse: Map<string, number>;
}

/**
 * Plans one request: prices every event, checks its balance exists, resolves client-id
 * repeats, applies gate_on_balance, and returns the rows to write. All or nothing: a failure
 * leaves `ctx` untouched; success folds the request's effects into `ctx` so the next request
 * of the same group sees them.
 */
export function planIngest(req: IngestRequest, ctx: IngestContext): Outcome<IngestPlan> {
  const p: Planning = {
    eventIds: [],
    costs: [],
    events: [],
    deltas: new Map(),
    seenInRequest: new Map(),
    drawnFrom: new Set(),
    periods: new Map(),
    leaseUse: new Map(),
  };
  for (let i = 0; i < req.events.length; i++) {
    const refused = planEvent(req, i, ctx, p);
    if (refused) return refused;
  }
  const refused = limitRefusal(p, ctx) ?? gateRefusal(req, p, ctx) ?? rangeRefusal(p, ctx);
  if (refused) return refused;
  for (const [key, d] of p.deltas) {
    const b = ctx.balances.get(key)!;
    b.amount += d.amount;
    b.pending += d.pending;
    // The running spend is what the limits of the group's later requests are checked against.
    if (b.spend !== undefined && b.limits !== undefined && hasLimit(b.limits))
      b.spend = applySpend(b.spend, [{ units: takenBy(d), takenAtMs: ctx.nowMs }], ctx.nowMs);
  }
  for (const e of p.events)
    if (e.contentHash !== null)
      ctx.known.set(companyScopedKey(req.companyId, e.eventId), {
        accountId: e.accountId,
        contentHash: e.contentHash,
        denomination: e.denomination,
      });
  for (const [key, period] of p.periods) ctx.periods.set(key, period.quantity);
  for (const [id, used] of p.leaseUse) ctx.leases!.get(id)!.remaining -= used;
  const { eventIds, costs, events, deltas, periods, drawnFrom, leaseUse } = p;
  return {
    ok: true,
    value: { eventIds, costs, events, deltas, periods: [...periods.values()], drawnFrom: [...drawnFrom], leaseUse },
  };
}

/** Event `i` of `req` planned into `p`, or why the request is refused. */
function planEvent(req: IngestRequest, i: number, ctx: IngestContext, p: Planning): Failure | undefined {
  const e = req.events[i]!;
  let contentHash: string | null = null;
  if (e.clientId !== null) {
    contentHash = eventContentHash(req.accountId, e);
    const inRequest = p.seenInRequest.get(e.clientId);
    const known = ctx.known.get(companyScopedKey(req.companyId, e.clientId));
    const earlier = inRequest?.hash ?? known?.contentHash;
    if (earlier !== undefined) {
      if (earlier !== contentHash)
        return failure(
          'event_id_reused_with_different_content',
          `events[${i}]: event id "${e.clientId}" was already used for a different event`,
          `events[${i}].id`,
          { index: i },
        );
      p.eventIds.push(e.clientId); // the same event again: accepted, never deducted twice
      p.costs.push({ amount: 0, denomination: inRequest?.denomination ?? known?.denomination ?? null });
      return undefined;
    }
  }
  const occurredAtMs = e.timestampMs ?? ctx.nowMs;
  const priced = priceEvent(req, e, i, occurredAtMs, ctx, p.periods);
  if (!priced.ok) return priced;
  const { cost, denomination, priceModel } = priced.value;
  const key = balanceKey(req.accountId, denomination);
  if (!ctx.balances.has(key))
    return eventFailure(
      'no_balance_for_denomination',
      `the account has no balance of denomination "${denomination}"`,
      i,
    );
  let covered = 0;
  if (e.leaseId !== null) {
    const l = ctx.leases?.get(e.leaseId);
    if (l === undefined || l.companyId !== req.companyId || l.accountId !== req.accountId)
      return leaseFailure(`no lease "${e.leaseId}" of this account`, i);
    if (l.denomination !== denomination)
      return leaseFailure(`lease "${e.leaseId}" holds "${l.denomination}", the event costs "${denomination}"`, i);
    if (l.open && e.state === 'complete') {
      const used = p.leaseUse.get(e.leaseId) ?? 0;
      covered = coveredBy(l.remaining - used, cost);
      if (covered > 0) p.leaseUse.set(e.leaseId, used + covered);
    }
  }
  if (e.clientId !== null) p.seenInRequest.set(e.clientId, { hash: contentHash!, denomination });
  const eventId = e.clientId ?? req.eventIds[i]!;
  p.eventIds.push(eventId);
  p.costs.push({ amount: cost, denomination });
  p.events.push({
    companyId: req.companyId,
    eventId,
    clientSupplied: e.clientId !== null,
    accountId: req.accountId,
    type: e.type,
    quantity: e.quantity,
    costAmount: cost,
    denomination,
    priceModel,
    metadata: e.metadata,
    state: e.state,
    contentHash,
    occurredAtMs,
    createdAtMs: ctx.nowMs,
    updatedAtMs: ctx.nowMs,
    expiresAtMs: e.state === 'pending' ? ctx.nowMs + HOLD_DURATION_MS : null,
    heldFrom: null,
    leaseId: e.leaseId,
    ...(covered > 0 ? { leaseCovered: covered } : {}),
  });
  if (e.state === 'cancelled') return undefined;
  p.drawnFrom.add(key);
  const d = p.deltas.get(key) ?? { amount: 0, pending: 0 };
  if (e.state === 'pending') d.pending += cost;
  else {
    d.amount -= cost;
    // What a lease covers was held: it leaves pending as it is used, and was counted as spend when it was held.
    d.pending -= covered;
  }
  p.deltas.set(key, d);
  return undefined;
}

function leaseFailure(message: string, i: number): Failure {
  return failure('unknown_lease', `events[${i}]: ${message}`, `events[${i}].lease_id`, { index: i });
}

/** The units a request's change of a balance takes: complete events' costs and holds (domain/spend.ts). */
export function takenBy(d: BalanceFigures): number {
  return d.pending - d.amount;
}

/** The units a request takes from a balance, from its figures before and after the request. */
export function takenBetween(before: BalanceFigures, after: BalanceFigures): number {
  return after.pending - before.pending - (after.amount - before.amount);
}

/** The limit of balance `b` (as before the request) that taking `units` at `nowMs` would pass, if any. */
export function limitPassed(b: BalanceFigures, units: number, nowMs: number): LimitBreach | undefined {
  return b.spend === undefined || b.limits === undefined ? undefined : limitBreach(b.spend, b.limits, units, nowMs);
}

/**
 * Spend limits: refused, whatever gate_on_balance says, when the units the request takes from a balance
 * would take its day's or month's spend above a limit (the day's first).
 */
function limitRefusal(p: Planning, ctx: IngestContext): Failure | undefined {
  if (ctx.enforceLimits === false) return undefined;
  for (const [key, d] of p.deltas) {
    const breach = limitPassed(ctx.balances.get(key)!, takenBy(d), ctx.nowMs);
    if (breach === undefined) continue;
    return spendLimitFailure('request', key.slice(key.indexOf('\u0000') + 1), breach);
  }
  return undefined;
}

/** The refusal of what would take a balance's spend past a limit (`what`: this request, this lease). */
export function spendLimitFailure(what: string, denomination: string, breach: LimitBreach): Failure {
  const { window, limit, spend } = breach;
  return failure(
    'spend_limit_reached',
    `this ${what} would take the ${window === 'day' ? 'daily' : 'monthly'} spend of "${denomination}" above its ` +
      `limit of ${limit} (spent ${spend})`,
    undefined,
    { denomination, window, limit, spend, resets_at: toIso(breach.resetsAtMs) },
  );
}

/** gate_on_balance: refused while a balance the request draws from has available < 0. */
function gateRefusal(req: IngestRequest, p: Planning, ctx: IngestContext): Failure | undefined {
  if (!req.gate && !req.events.some((e) => e.gate)) return undefined;
  for (const key of p.drawnFrom) {
    const b = ctx.balances.get(key)!;
    if (available(b.amount, b.pending) >= 0) continue;
    const denomination = key.slice(key.indexOf('\u0000') + 1);
    return failure(
      'insufficient_balance',
      `the balance "${denomination}" is negative; gate_on_balance refused the request`,
      undefined,
      { denomination, available: available(b.amount, b.pending) },
    );
  }
  return undefined;
}

/** A request that would take a balance's figures beyond the exact integer range is refused. */
function rangeRefusal(p: Planning, ctx: IngestContext): Failure | undefined {
  for (const [key, d] of p.deltas) {
    const b = ctx.balances.get(key)!;
    const amount = b.amount + d.amount;
    const pending = b.pending + d.pending;
    if (Math.abs(amount) > AMOUNT_MAX || Math.abs(pending) > AMOUNT_MAX || Math.abs(amount - pending) > AMOUNT_MAX)
      return failure('amount_out_of_range', 'this request would take a balance beyond the exact integer range');
  }
  return undefined;
}
