/**
 * The credit grants the bench's balances hold (contract "Credit grants"), for both benches:
 *
 * - `npm run bench --grants N`: every balance holds the initial grant (INITIAL_GRANT units, as
 *   `POST …/balance/{d} {amount}` makes it: promotional, priority 50, never expires) and N − 1
 *   more of `--grant-units` each, drawn before it: priorities 5, 10, …, expiring 1, 2, … years
 *   ahead (so that they stay active the whole run), promotional and paid in turn. With the default
 *   size none is used up in a run; with a few thousand units the events draw across them.
 * - `npm run bench:growth --grants N`: the initial grant and N − 1 grants of 500–5,000 units each
 *   whose expiries are spread over the next 60 days (from one day ahead, so that none expires
 *   while the bench runs), priorities 40, 30, … (drawn first), promotional and paid in turn.
 *
 * Nothing here reaches the engine: the specs are turned into API bodies (lib/api.ts) or into the
 * engine's grant specs (lib/engine.ts, `grantSpec`).
 */
import { INITIAL_GRANT } from './options.js';

export const DAY_MS = 86_400_000;
const YEAR_MS = 365 * DAY_MS;
/** Paid grants carry a cost basis (USD cents per unit). */
const PAID_COST_BASIS = '0.8';
/** `npm run bench`: the k-th extra grant's priority is PRIORITY_STEP × k (all below the initial grant's 50). */
const PRIORITY_STEP = 5;

/** Growth: the seeded grants expire between these many days ahead. */
export const GROWTH_EXPIRY_FROM_DAYS = 1;
export const GROWTH_EXPIRY_TO_DAYS = 60;
/** Growth: seeded grants hold GROWTH_UNITS_STEP × (1 … GROWTH_UNITS_STEPS) units. */
const GROWTH_UNITS_STEP = 500;
const GROWTH_UNITS_STEPS = 10;
/** Growth: the k-th extra grant's priority (40, 30, …, at least 0). */
const GROWTH_FIRST_PRIORITY = 40;
/** The fractional part of the golden ratio: consecutive multiples spread evenly over [0, 1). */
const GOLDEN = 0.6180339887498949;

/** One grant beyond the initial one, as the bench states it. */
export interface BenchGrant {
  amount: number;
  priority: number;
  category: 'promotional' | 'paid';
  /** USD cents per unit (paid grants), else null. */
  costBasis: string | null;
  /** null: never expires. */
  expiresAtMs: number | null;
  name: string;
}

function categoryOf(k: number): Pick<BenchGrant, 'category' | 'costBasis'> {
  return k % 2 === 1 ? { category: 'promotional', costBasis: null } : { category: 'paid', costBasis: PAID_COST_BASIS };
}

/** `npm run bench`: the `grants − 1` grants each balance holds beside the initial one. */
export function extraGrants(grants: number, units: number, nowMs: number): BenchGrant[] {
  return Array.from({ length: Math.max(0, grants - 1) }, (_, i) => {
    const k = i + 1;
    return {
      amount: units,
      priority: PRIORITY_STEP * k,
      ...categoryOf(k),
      expiresAtMs: nowMs + k * YEAR_MS,
      name: `bench grant ${k}`,
    };
  });
}

/** Units a balance holds after its setup: the initial grant and the others. */
export function grantedUnits(grants: readonly Pick<BenchGrant, 'amount'>[]): number {
  return grants.reduce((sum, g) => sum + g.amount, INITIAL_GRANT);
}

/** The body of `POST /v1/accounts/{id}/balance/{d}/grants` for `g`. */
export function grantBody(g: BenchGrant): Record<string, unknown> {
  return {
    amount: g.amount,
    priority: g.priority,
    category: g.category,
    ...(g.costBasis !== null ? { cost_basis: g.costBasis } : {}),
    ...(g.expiresAtMs !== null ? { expires_at: new Date(g.expiresAtMs).toISOString() } : {}),
    name: g.name,
  };
}

const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** One line for the report: what every balance holds. */
export function describeGrants(grants: number, units: number): string {
  if (grants <= 1) return `1 grant per balance (the initial ${whole.format(INITIAL_GRANT)} units)`;
  const priorities = extraGrants(grants, units, 0)
    .map((g) => g.priority)
    .join(', ');
  return (
    `${grants} grants per balance: ${grants - 1} × ${whole.format(units)} units drawn first ` +
    `(priorities ${priorities}; expiring 1–${grants - 1} years ahead), then the initial ` +
    `${whole.format(INITIAL_GRANT)} units`
  );
}

/**
 * Growth: the `grants − 1` grants of account `index` beside its initial one, expiring over the
 * next GROWTH_EXPIRY_FROM_DAYS–GROWTH_EXPIRY_TO_DAYS days from `nowMs` (spread evenly over the
 * accounts, the same for a given index).
 */
export function growthGrants(index: number, grants: number, nowMs: number): BenchGrant[] {
  const perAccount = Math.max(0, grants - 1);
  const spanMs = (GROWTH_EXPIRY_TO_DAYS - GROWTH_EXPIRY_FROM_DAYS) * DAY_MS;
  return Array.from({ length: perAccount }, (_, i) => {
    const k = i + 1;
    const n = index * perAccount + i;
    const spread = (n * GOLDEN) % 1;
    return {
      amount: GROWTH_UNITS_STEP * (1 + ((index + 3 * k) % GROWTH_UNITS_STEPS)),
      priority: Math.max(0, GROWTH_FIRST_PRIORITY - 10 * i),
      ...categoryOf(k),
      expiresAtMs: nowMs + GROWTH_EXPIRY_FROM_DAYS * DAY_MS + Math.floor(spread * spanMs),
      name: `growth grant ${k}`,
    };
  });
}

/** Growth: units of account `index`'s grants beside its initial one (what growthGrants gives it). */
export function growthExtraUnits(index: number, grants: number): number {
  return growthGrants(index, grants, 0).reduce((sum, g) => sum + g.amount, 0);
}
