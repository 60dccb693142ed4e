import { metadataViolation } from './metadata.js';
import { canonicalJson, sha256Hex } from '../lib/canonical.js';
import { balanceKey, companyScopedKey, pricePeriodKey } from '../lib/keys.js';
import { parseRfc3339 } from './time.js';
import type { Allocation } from './grant-lots.js';
import { HOLD_DURATION_MS, available, type EventState } from './holds.js';
import { AMOUNT_MAX } from './money.js';
import { failure, type Failure, type Outcome, type Reason } from './outcome.js';
import { DECIMAL_ZERO, decimalFromNumber, type Decimal } from '../lib/decimal.js';
import {
  eventCost,
  isPeriodPriced,
  periodEventCost,
  type PeriodCeiling,
  type Price,
  type PriceModel,
} from './pricing.js';
import { monthStart } from './time.js';

/** Most events one request may carry. */
export const EVENTS_PER_REQUEST_MAX = 1000;
/** Longest client-chosen event id. */
export const CLIENT_EVENT_ID_LENGTH_MAX = 128;

/** An event as the request schema admits it (types already checked). */
export interface EventInput {
  type: string;
  id?: string;
  quantity?: number;
  cost_override?: { amount: number; denomination: string };
  cost_override_amount?: number;
  cost_override_denomination?: string;
  metadata?: Record<string, unknown>;
  state?: 'pending' | 'complete' | 'completed' | 'cancelled';
  gate_on_balance?: boolean;
  /** RFC 3339: when the usage happened (default: when it is recorded). */
  timestamp?: string;
}

/** How far an event's `timestamp` may be from the time its request is received. */
export interface EventTimeLimits {
  nowMs: number;
  /** BILLING_EVENT_MAX_AGE_DAYS in milliseconds: older timestamps are refused. */
  maxAgeMs: number;
}

/** How far in the future a `timestamp` may be (clocks of callers drift). */
export const EVENT_TIMESTAMP_FUTURE_MS = 5 * 60_000;

export interface NormalizedEvent {
  clientId: string | null;
  type: string;
  quantity: number;
  override: { amount: number; denomination: string } | null;
  metadata: Record<string, unknown> | null;
  state: EventState;
  gate: boolean;
  /** The given `timestamp`, or null: the event then happened when it is recorded. */
  timestampMs: number | null;
}

/** Folds the accepted spellings (flat cost_override_*, `completed`) into one shape. */
export function normalizeEvent(input: EventInput, index: number, time: EventTimeLimits): Outcome<NormalizedEvent> {
  const param = `events[${index}]`;
  // The HTTP body parser refuses 1e400 already; the rule holds here too, since the usage rollup and
  // the content hash need an exact decimal even when a cost_override means the quantity prices nothing.
  if (input.quantity !== undefined && !(Number.isFinite(input.quantity) && input.quantity >= 0)) {
    return failure(
      'quantity_must_be_a_non_negative_number',
      `${param}.quantity must be a finite number ≥ 0`,
      `${param}.quantity`,
      { index },
    );
  }
  if (input.metadata !== undefined) {
    const refused = metadataViolation(input.metadata, `${param}.metadata`);
    if (refused) return { ...refused, details: { index } };
  }
  let timestampMs: number | null = null;
  if (input.timestamp !== undefined) {
    timestampMs = parseRfc3339(input.timestamp);
    if (timestampMs === null) {
      return failure('invalid_timestamp', `${param}.timestamp must be an RFC 3339 date-time`, `${param}.timestamp`, {
        index,
      });
    }
    if (timestampMs > time.nowMs + EVENT_TIMESTAMP_FUTURE_MS || timestampMs < time.nowMs - time.maxAgeMs) {
      return failure(
        'timestamp_out_of_range',
        `${param}.timestamp must be at most 5 minutes in the future and at most ` +
          `${Math.round(time.maxAgeMs / 86_400_000)} days in the past`,
        `${param}.timestamp`,
        { index },
      );
    }
  }
  const hasFlat = input.cost_override_amount !== undefined || input.cost_override_denomination !== undefined;
  let override: NormalizedEvent['override'] = null;
  if (input.cost_override !== undefined && hasFlat) {
    return failure(
      'cost_override_given_twice',
      `${param}: give cost_override or cost_override_amount/cost_override_denomination, not both`,
      param,
      { index },
    );
  }
  if (input.cost_override !== undefined) {
    override = { amount: input.cost_override.amount, denomination: input.cost_override.denomination };
  } else if (hasFlat) {
    if (input.cost_override_amount === undefined || input.cost_override_denomination === undefined) {
      return failure(
        'cost_override_needs_amount_and_denomination',
        `${param}: cost_override_amount and cost_override_denomination go together`,
        param,
        { index },
      );
    }
    override = { amount: input.cost_override_amount, denomination: input.cost_override_denomination };
  }
  const state: EventState = input.state === undefined || input.state === 'completed' ? 'complete' : input.state;
  return {
    ok: true,
    value: {
      clientId: input.id ?? null,
      type: input.type,
      quantity: input.quantity ?? 1,
      override,
      metadata: input.metadata ?? null,
      state,
      gate: input.gate_on_balance === true,
      timestampMs,
    },
  };
}

export { balanceKey, companyScopedKey, pricePeriodKey } from '../lib/keys.js';

/** The fingerprint that decides whether a repeated client id is "the same event". */
export function eventContentHash(accountId: string, e: NormalizedEvent): string {
  const content: Record<string, unknown> = {
    a: accountId,
    t: e.type,
    q: e.quantity,
    o: e.override,
    m: e.metadata,
    s: e.state,
  };
  // Only a given timestamp is content (a retry without one is the same event): hashes of events
  // without a timestamp are those they always were.
  if (e.timestampMs !== null) content.ts = e.timestampMs;
  return sha256Hex(canonicalJson(content));
}

export interface BalanceFigures {
  amount: number;
  pending: number;
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
}

/** An event as recorded: what planning an events request makes, and what the store keeps (store/events/). */
export interface EventRow {
  companyId: string;
  eventId: string;
  clientSupplied: boolean;
  accountId: string;
  type: string;
  quantity: number;
  costAmount: number;
  denomination: string;
  /** The model of the price that gave the cost; null for a cost_override (or an event from before models). */
  priceModel: PriceModel | null;
  metadata: Record<string, unknown> | null;
  state: EventState;
  contentHash: string | null;
  /** When the usage happened: the request's `timestamp`, else when it was recorded. */
  occurredAtMs: number;
  createdAtMs: number;
  updatedAtMs: number;
  expiresAtMs: number | null;
  /**
   * While pending: the units it holds, per grant (what it holds beyond them is held without a grant);
   * filled in when its balance's grants are drawn.
   */
  heldFrom: Allocation[] | null;
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
}

export interface IngestRequest {
  companyId: string;
  accountId: string;
  events: NormalizedEvent[];
  /** Each event's id, by index: its client id, else the id it was given when the request was received. */
  eventIds: string[];
  gate: boolean;
  /**
   * The request's Idempotency-Key claim, when it has one, and the answer its acceptance gives (built
   * by the HTTP layer): recorded in the transaction that records the events, so that a crash between
   * the two can never make a retry apply them again.
   */
  idempotency?: { scope: string; key: string; owner: string; answer: string };
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
  };
  for (let i = 0; i < req.events.length; i++) {
    const refused = planEvent(req, i, ctx, p);
    if (refused) return refused;
  }
  const refused = gateRefusal(req, p, ctx) ?? rangeRefusal(p, ctx);
  if (refused) return refused;
  for (const [key, d] of p.deltas) {
    const b = ctx.balances.get(key)!;
    b.amount += d.amount;
    b.pending += d.pending;
  }
  for (const e of p.events)
    if (e.contentHash !== null)
      ctx.known.set(companyScopedKey(req.companyId, e.eventId), {
        accountId: e.accountId,
        contentHash: e.contentHash,
        denomination: e.denomination,
      });
  for (const [key, period] of p.periods) ctx.periods.set(key, period.quantity);
  const { eventIds, costs, events, deltas, periods, drawnFrom } = p;
  return {
    ok: true,
    value: { eventIds, costs, events, deltas, periods: [...periods.values()], drawnFrom: [...drawnFrom] },
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
  });
  if (e.state === 'cancelled') return undefined;
  p.drawnFrom.add(key);
  const d = p.deltas.get(key) ?? { amount: 0, pending: 0 };
  if (e.state === 'pending') d.pending += cost;
  else d.amount -= cost;
  p.deltas.set(key, d);
  return undefined;
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
