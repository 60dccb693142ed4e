/**
 * The plan of an events request against balances at an instant: the one function both the events
 * call and the pre-flight check run (`planEvents`). The events call plans against the balances a
 * posting has locked and posts the plan; the check plans against a view and answers with it. Both
 * load the same inputs the same way and differ only in where the balances and period counts come
 * from, so they cannot disagree on what a request costs or whether it is allowed.
 */
import { companyScopedKey, type IngestRequest, pricePeriodKey } from '../domain/events.js';
import {
  type BalanceFigures,
  type IngestContext,
  type IngestPlan,
  type KnownEvent,
  type LeaseFigures,
  planIngest,
  type PricePeriodCount,
  type PricePeriodKey,
  pricePeriodsOf,
} from '../domain/ingest-plan.js';
import { entitlementOf } from '../domain/entitlements.js';
import { type Allocation, type Draw, drawMany } from '../domain/grants.js';
import { isOpenAt, remainingOf } from '../domain/leases.js';
import type { SpendChange } from '../domain/spend.js';
import { failure, type Outcome } from '../domain/outcome.js';
import type { Price } from '../domain/pricing.js';
import { type UsageRow, usageOf } from '../domain/usage.js';
import { type Decimal, DECIMAL_ZERO } from '../lib/decimal.js';
import { balanceKey } from '../lib/keys.js';
import type {
  BalanceKey,
  BalanceRow,
  EntitlementRows,
  EventRow,
  FeatureRow,
  LeaseChange,
  LeaseRow,
  ReadTx,
} from '../store/types.js';
import { leaseExpirations } from './due.js';
import type { PostedEntry } from './entries.js';
import type { BalanceMap } from './view.js';

export interface IngestResult {
  eventIds: string[];
}

/**
 * Where a plan finds its accounts' owners (by account id, those that exist), its balances and its price periods'
 * counts: balances locked (the events call) or viewed (the check).
 */
export interface PlanSource {
  owners(accountIds: string[]): Promise<ReadonlyMap<string, string>>;
  balances(keys: BalanceKey[]): Promise<BalanceMap>;
  periods(keys: PricePeriodKey[]): Promise<Map<string, Decimal>>;
}

/** A balance a request draws from, as it was before the request and as the request leaves it. */
export interface DrawnBalance {
  key: string;
  before: BalanceFigures;
  after: BalanceFigures;
}

/**
 * How a group's requests are planned: `in-order`, each against the state the ones before it leave
 * (a group commit: every request is written); `each-alone`, each against the state as loaded (checks:
 * nothing is written, no request sees another, and a spend limit passed does not refuse: the check says so).
 */
export type PlanMode = 'in-order' | 'each-alone';

/** A group of requests planned: each request's outcome, and what posting the accepted ones writes. */
export interface GroupPlan {
  outcomes: Outcome<IngestResult>[];
  /** Each accepted request's plan, by request (undefined where refused): its costs and balances drawn from. */
  plans: (IngestPlan | undefined)[];
  /** `each-alone` only: the balances each accepted request draws from, before it and after it. */
  drawn: (DrawnBalance[] | undefined)[];
  events: EventRow[];
  entries: PostedEntry[];
  usage: UsageRow[];
  /** The price periods counted, with their new completed quantities. */
  counted: PricePeriodCount[];
  /** `in-order` only: the leases the accepted requests drew from, as the posting leaves them (posted with it). */
  leases: LeaseChange[];
}

/** What planning a group needs from the store beside its balances: prices and known client ids. */
interface IngestInputs {
  prices: Map<string, Price>;
  known: Map<string, KnownEvent>;
}

/** Everything a group is planned against, loaded once for the group. */
interface Loaded extends IngestInputs {
  refused: (Outcome<IngestResult> | undefined)[];
  balances: BalanceMap;
  periods: Map<string, Decimal>;
  /** The leases the events name, read after their balances (locked, for the events call: then they are current). */
  leases: Map<string, LeaseRow>;
}

/**
 * Plans a group of requests at `nowMs`, each all or nothing (`mode`: in order, or each alone):
 * which accounts exist and whose they are, the prices and known client ids of each company (one
 * query each for the group), the balances the events draw from and the periods they price against
 * (from `source`), then each request priced and gated (domain planIngest) and each event's cost
 * drawn from its balance's grants (the entries to post).
 */
export async function planEvents(
  tx: ReadTx,
  requests: IngestRequest[],
  nowMs: number,
  source: PlanSource,
  mode: PlanMode = 'in-order',
): Promise<GroupPlan> {
  const loaded = await load(tx, requests, nowMs, source);
  const shared = mode === 'in-order' ? contextOf(loaded, nowMs) : undefined;
  const plans: (IngestPlan | undefined)[] = new Array(requests.length);
  const drawn: (DrawnBalance[] | undefined)[] = new Array(requests.length);
  const events: EventRow[] = [];
  const counted = new Map<string, PricePeriodCount>();
  const outcomes = requests.map((r, i): Outcome<IngestResult> => {
    const refusal = loaded.refused[i];
    if (refusal) return refusal;
    const ctx = shared ?? aloneContext(loaded, r, nowMs);
    const planned = planIngest(r, ctx);
    if (!planned.ok) return planned;
    plans[i] = planned.value;
    if (!shared) drawn[i] = planned.value.drawnFrom.map((key) => drawnBalance(loaded, ctx, key));
    for (const e of planned.value.events) events.push(e);
    for (const c of planned.value.periods) counted.set(pricePeriodKey(c), c);
    return { ok: true, value: { eventIds: planned.value.eventIds } };
  });
  const leases = shared === undefined ? new Map<string, LeaseChange>() : leaseChanges(loaded, shared, nowMs);
  return {
    outcomes,
    plans,
    drawn,
    events,
    entries: drawEntries(events, nowMs, loaded.leases, leases),
    usage: usageOf(events.filter((e) => e.state === 'complete')),
    counted: [...counted.values()],
    leases: [...leases.values()],
  };
}

/**
 * The leases a group planned in order drew from: their `used` as planned (`heldFrom` is set when posted); and the
 * leases its events named that expired holding nothing (no posting releases those: written expired here).
 */
function leaseChanges(loaded: Loaded, ctx: IngestContext, nowMs: number): Map<string, LeaseChange> {
  const out = new Map<string, LeaseChange>();
  for (const [id, l] of loaded.leases) {
    if (l.status === 'open' && remainingOf(l) === 0 && !isOpenAt(l, nowMs)) {
      out.set(id, leaseExpirations([l])[0]!);
      continue;
    }
    const used = remainingOf(l) - ctx.leases!.get(id)!.remaining;
    if (used === 0) continue;
    const { leaseId, released, status, heldFrom, closedAtMs } = l;
    out.set(id, { leaseId, used: l.used + used, released, status, heldFrom, closedAtMs });
  }
  return out;
}

/** What planning reads of the loaded leases (copies: planning changes their remaining). */
function leaseFiguresOf(loaded: Loaded, nowMs: number, only?: Iterable<string>): Map<string, LeaseFigures> {
  const out = new Map<string, LeaseFigures>();
  for (const id of only ?? loaded.leases.keys()) {
    const l = loaded.leases.get(id);
    if (l === undefined || out.has(id)) continue;
    const { companyId, accountId, denomination } = l;
    out.set(id, { companyId, accountId, denomination, open: isOpenAt(l, nowMs), remaining: remainingOf(l) });
  }
  return out;
}

async function load(tx: ReadTx, requests: IngestRequest[], nowMs: number, source: PlanSource): Promise<Loaded> {
  const refused: (Outcome<IngestResult> | undefined)[] = new Array(requests.length);
  const { prices, known } = await loadInputs(tx, requests, refused, source);
  await gateEntitlements(tx, requests, refused, nowMs);
  const balances = await source.balances(balanceKeysOf(requests, refused, prices));
  const periodKeys = pricePeriodsOf(
    requests.filter((_, i) => !refused[i]),
    prices,
    nowMs,
  );
  const periods = periodKeys.length > 0 ? await source.periods(periodKeys) : new Map<string, Decimal>();
  for (const k of periodKeys) if (!periods.has(pricePeriodKey(k))) periods.set(pricePeriodKey(k), DECIMAL_ZERO);
  const leaseIds = new Set<string>();
  requests.forEach((r, i) => {
    if (!refused[i]) for (const e of r.events) if (e.leaseId !== null) leaseIds.add(e.leaseId);
  });
  const leases = new Map<string, LeaseRow>();
  if (leaseIds.size > 0) for (const l of await tx.leases.findLeasesByIds([...leaseIds])) leases.set(l.leaseId, l);
  return { refused, prices, known, balances, periods, leases };
}

/** What planning reads and changes of a balance: its figures, its spend windows and limits. */
function figuresOf(b: BalanceRow): BalanceFigures {
  return { amount: b.amount, pending: b.pending, spend: b.spend, limits: b.limits };
}

/** The running context of a group planned in order: every balance loaded, its figures changed as requests pass. */
function contextOf(loaded: Loaded, nowMs: number): IngestContext {
  const figures = new Map<string, BalanceFigures>();
  for (const [k, b] of loaded.balances) figures.set(k, figuresOf(b));
  const { prices, periods, known } = loaded;
  return { nowMs, prices, periods, known, balances: figures, leases: leaseFiguresOf(loaded, nowMs) };
}

/** The context of a request planned alone: copies of what it reads of the loaded state, which it may change. */
function aloneContext(loaded: Loaded, r: IngestRequest, nowMs: number): IngestContext {
  const balances = new Map<string, BalanceFigures>();
  for (const k of balanceKeysOf([r], [undefined], loaded.prices)) {
    const key = balanceKey(k.accountId, k.denomination);
    const b = loaded.balances.get(key);
    if (b) balances.set(key, figuresOf(b));
  }
  const periods = new Map<string, Decimal>();
  for (const k of pricePeriodsOf([r], loaded.prices, nowMs))
    periods.set(pricePeriodKey(k), loaded.periods.get(pricePeriodKey(k))!);
  const known = new Map<string, KnownEvent>();
  for (const e of r.events) {
    const key = e.clientId === null ? undefined : companyScopedKey(r.companyId, e.clientId);
    const k = key === undefined ? undefined : loaded.known.get(key);
    if (key !== undefined && k !== undefined) known.set(key, k);
  }
  const leases = leaseFiguresOf(
    loaded,
    nowMs,
    r.events.flatMap((e) => (e.leaseId === null ? [] : [e.leaseId])),
  );
  // Planned alone is the check's way: it reports a spend limit passed (allowed false) rather than refusing.
  return { nowMs, enforceLimits: false, prices: loaded.prices, periods, known, balances, leases };
}

function drawnBalance(loaded: Loaded, ctx: IngestContext, key: string): DrawnBalance {
  const b = loaded.balances.get(key)!;
  return { key, before: figuresOf(b), after: ctx.balances.get(key)! };
}

/**
 * Each event's cost from its balance's grants, in request order, one entry per balance: a complete
 * event takes it in drawing order; a pending one holds it there, and keeps which grants it holds for
 * its settle (`heldFrom`, set on the event row when the entry is applied).
 */
function drawEntries(
  events: EventRow[],
  nowMs: number,
  leaseRows: ReadonlyMap<string, LeaseRow>,
  leases: ReadonlyMap<string, LeaseChange>,
): PostedEntry[] {
  // `spend`: the units taken, one change per event type (spend alerts of one type count only theirs).
  type Drawing = { row: EventRow; draws: Draw[]; held: EventRow[]; spend: SpendChange[]; leases?: Set<string> };
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
      d = { row: e, draws: [], held: [], spend: [{ units: 0, takenAtMs: nowMs, eventType: e.type }] };
      draws.set(balanceKey(e.accountId, e.denomination), d);
    }
    last = d;
    const hold = e.state === 'pending';
    const covered = e.leaseCovered ?? 0;
    if (covered > 0) {
      d.draws.push({ units: e.costAmount, hold, ref: e.eventId, lease: { leaseId: e.leaseId!, covered } });
      if (d.leases === undefined) d.leases = new Set();
      d.leases.add(e.leaseId!);
    } else d.draws.push({ units: e.costAmount, hold, ref: e.eventId });
    // A request's events mostly share one type: the last change is the one, found without a search.
    let s = d.spend[d.spend.length - 1]!;
    if (s.eventType !== e.type) {
      const found = d.spend.find((x) => x.eventType === e.type);
      if (found !== undefined) s = found;
      else {
        s = { units: 0, takenAtMs: nowMs, eventType: e.type };
        d.spend.push(s);
      }
    }
    // What a lease covers was counted as spend when the lease was opened (domain/leases.ts).
    s.units += e.costAmount - covered;
    if (hold) d.held.push(e);
  }
  const entries: PostedEntry[] = [];
  for (const d of draws.values())
    entries.push({
      accountId: d.row.accountId,
      denomination: d.row.denomination,
      // Usage taken and held counts as spend now (domain/spend.ts).
      spend: d.spend,
      apply: (lots) => {
        const held = new Map<string, readonly Allocation[]>();
        for (const id of d.leases ?? []) held.set(id, leaseRows.get(id)!.heldFrom);
        const step = drawMany(lots, d.draws, nowMs, held);
        let h = 0;
        d.draws.forEach((x, i) => {
          if (x.hold) d.held[h++]!.heldFrom = step.allocations[i]!;
        });
        // The leases drawn keep what they still hold, per grant, for the next group and their release.
        for (const [id, rest] of step.leases) {
          const change = leases.get(id);
          if (change !== undefined) change.heldFrom = rest;
        }
        return step;
      },
    });
  return entries;
}

/**
 * Which accounts exist and whose they are (a foreign account is answered like a missing one, in
 * `refused`), then the prices and known client ids of each company, one query each for the group.
 */
async function loadInputs(
  tx: ReadTx,
  requests: IngestRequest[],
  refused: (Outcome<IngestResult> | undefined)[],
  source: PlanSource,
): Promise<IngestInputs> {
  const owners = await source.owners(requests.map((r) => r.accountId));
  requests.forEach((r, i) => {
    if (owners.get(r.accountId) !== r.companyId)
      refused[i] = failure('not_found', `no such account: ${r.accountId}`, 'account_id');
  });
  const prices = new Map<string, Price>();
  const known = new Map<string, KnownEvent>();
  for (const [companyId, reqs] of groupByCompany(requests, refused)) {
    const types = new Set<string>();
    const ids = new Set<string>();
    for (const r of reqs)
      for (const e of r.events) {
        if (!e.override) types.add(e.type);
        if (e.clientId !== null) ids.add(e.clientId);
      }
    for (const p of await tx.prices.findPrices(companyId, [...types]))
      prices.set(companyScopedKey(companyId, p.type), p);
    for (const e of await tx.events.findEventsByIds(companyId, [...ids]))
      known.set(companyScopedKey(companyId, e.eventId), {
        accountId: e.accountId,
        contentHash: e.contentHash,
        denomination: e.denomination,
      });
  }
  return { prices, known };
}

/**
 * With gate_on_balance, an event whose type a metered feature meters needs the account entitled to it (contract
 * "Features and entitlements"): else its request is refused whole, 403 not_entitled naming the event. Only gated
 * requests cost anything: per company, one indexed query for the metered features of their types, and only where
 * there are some, one for the accounts' plan entries and overrides of those features.
 */
async function gateEntitlements(
  tx: ReadTx,
  requests: IngestRequest[],
  refused: (Outcome<IngestResult> | undefined)[],
  nowMs: number,
): Promise<void> {
  const gated = (r: IngestRequest, e: IngestRequest['events'][number]) => r.gate || e.gate;
  const byCompany = new Map<string, number[]>();
  requests.forEach((r, i) => {
    if (refused[i] || !r.events.some((e) => gated(r, e))) return;
    const list = byCompany.get(r.companyId);
    if (list === undefined) byCompany.set(r.companyId, [i]);
    else list.push(i);
  });
  for (const [companyId, indexes] of byCompany) {
    const types = new Set<string>();
    for (const i of indexes) for (const e of requests[i]!.events) if (gated(requests[i]!, e)) types.add(e.type);
    const metered = await tx.features.findMeteredFeatures(companyId, [...types]);
    if (metered.length === 0) continue;
    const accounts = [...new Set(indexes.map((i) => requests[i]!.accountId))];
    const rows = await tx.features.entitlementRowsOfAccounts(
      accounts,
      metered.map((f) => f.key),
    );
    for (const i of indexes) {
      const r = requests[i]!;
      const of = rows.get(r.accountId) ?? { plan: [], overrides: [] };
      r.events.forEach((e, index) => {
        if (refused[i] || !gated(r, e)) return;
        const denied = metered.find((f) => f.eventType === e.type && !entitledIn(f, of, nowMs));
        if (denied !== undefined)
          refused[i] = failure(
            'not_entitled',
            `the account is not entitled to feature "${denied.key}", which events of type "${e.type}" use`,
            `events[${index}]`,
          );
      });
    }
  }
}

/** Whether an account's plan entries and overrides entitle it to a feature at `nowMs`. */
function entitledIn(f: FeatureRow, rows: EntitlementRows, nowMs: number): boolean {
  const plan = rows.plan.find((p) => p.feature === f.key);
  const o = rows.overrides.find((x) => x.feature === f.key);
  return entitlementOf(
    f,
    plan && { feature: plan.feature, value: null },
    o && { feature: o.feature, enabled: o.enabled, value: null, expiresAtMs: o.expiresAtMs },
    nowMs,
  ).hasAccess;
}

/** The balances the group's events may draw from (an event without a price or override draws from none). */
function balanceKeysOf(
  requests: IngestRequest[],
  refused: (Outcome<unknown> | undefined)[],
  prices: Map<string, Price>,
): BalanceKey[] {
  const keys: BalanceKey[] = [];
  requests.forEach((r, i) => {
    if (refused[i]) return;
    for (const e of r.events) {
      const denomination = e.override?.denomination ?? prices.get(companyScopedKey(r.companyId, e.type))?.denomination;
      if (denomination !== undefined) keys.push({ accountId: r.accountId, denomination });
    }
  });
  return keys;
}

function groupByCompany<T>(
  requests: IngestRequest[],
  refused: (Outcome<T> | undefined)[],
): Map<string, IngestRequest[]> {
  const by = new Map<string, IngestRequest[]>();
  requests.forEach((r, i) => {
    if (refused[i]) return;
    const list = by.get(r.companyId) ?? [];
    list.push(r);
    by.set(r.companyId, list);
  });
  return by;
}
