/**
 * Prices and what an event costs under them, exactly. Three models:
 * - `unit`: quantity × unit_amount, rounded up per event;
 * - `graduated`: tiers of the period's cumulative quantity, each with a unit amount and an
 *   optional flat amount due once, when the period's quantity first enters the tier;
 * - `package`: every started block of `package_size` units of the period costs `package_amount`.
 * For the two period models, C(q) is the exact cumulative price of q units in a period (a UTC
 * calendar month, per account and type), and an event of quantity q after Q completed units costs
 * ceil(C(Q + q)) − ceil(C(Q)): the costs of any split of a period's usage telescope to
 * ceil(C(total)). Pure: no I/O, no clock.
 */
import {
  addDecimal,
  ceilDecimal,
  compareDecimal,
  DECIMAL_SCALE_MAX,
  DECIMAL_ZERO,
  decimalFromNumber,
  decimalOfInteger,
  formatDecimal,
  multiplyCeil,
  multiplyDecimal,
  parseDecimal,
  subtractDecimal,
  type Decimal,
} from '../lib/decimal.js';
import { AMOUNT_MAX } from './money.js';
import type { Outcome, Reason } from './outcome.js';
import { failure } from './outcome.js';

export const PRICE_MODELS = ['unit', 'graduated', 'package'] as const;
export type PriceModel = (typeof PRICE_MODELS)[number];

/** Most tiers one graduated price may have. */
export const TIERS_MAX = 100;

/** One tier of a graduated price; amounts are exact normalised decimal strings. */
export interface Tier {
  /** The period's quantity up to which (inclusive) this tier prices; null for the last tier. */
  upTo: number | null;
  unitAmount: string;
  flatAmount: string | null;
}

/** What a price charges, by model. */
export type PriceTerms =
  | { model: 'unit'; unitAmount: string }
  | { model: 'graduated'; tiers: Tier[] }
  | { model: 'package'; packageSize: number; packageAmount: string };

/** A company's price for one event type, in one denomination. */
export interface Price {
  type: string;
  denomination: string;
  terms: PriceTerms;
}

/** Whether events priced by these terms are counted in a period (and priced against its count). */
export function isPeriodPriced(terms: PriceTerms): boolean {
  return terms.model !== 'unit';
}

/** A price as the request gives it (types already checked by the schema). */
export interface PriceInput {
  model?: string;
  unit_amount?: string | number;
  tiers?: { up_to: number | null; unit_amount: string | number; flat_amount?: string | number | null }[];
  package_size?: number;
  package_amount?: string | number;
}

const MODEL_FIELDS: Record<PriceModel, (keyof PriceInput)[]> = {
  unit: ['unit_amount'],
  graduated: ['tiers'],
  package: ['package_size', 'package_amount'],
};

/** The reason codes of one amount field: `unit_amount` keeps the codes it always had. */
function amountReasons(param: string): [Reason, Reason] {
  return param === 'unit_amount' || param.endsWith('.unit_amount')
    ? ['unit_amount_must_be_a_non_negative_decimal', 'unit_amount_has_too_many_decimals']
    : ['amount_must_be_a_non_negative_decimal', 'amount_has_too_many_decimals'];
}

/** Accepts a decimal string or a JSON number and returns its exact normalised spelling. */
export function parseAmount(raw: string | number, param: string): Outcome<string> {
  const [invalid, tooPrecise] = amountReasons(param);
  const d = typeof raw === 'number' ? decimalFromNumber(raw) : parseDecimal(raw.trim() === raw ? raw : '');
  if (!d) return failure(invalid, `${param} must be a non-negative decimal such as "0.25" or 3`, param);
  if (d.scale > DECIMAL_SCALE_MAX) {
    return failure(tooPrecise, `${param} may have at most ${DECIMAL_SCALE_MAX} decimal places`, param);
  }
  if (d.coef > BigInt(AMOUNT_MAX) * 10n ** BigInt(d.scale)) {
    return failure('amount_out_of_range', `${param} is too large`, param);
  }
  return { ok: true, value: formatDecimal(d) };
}

/**
 * The terms of a price from its request: the model's own fields required, another model's
 * refused, every amount exact. Each refusal names the field (`tiers[2].up_to`).
 */
export function parsePriceTerms(input: PriceInput): Outcome<PriceTerms> {
  const model = input.model ?? 'unit';
  if (model === 'volume') {
    return failure(
      'price_model_not_offered',
      'volume pricing (a tier crossing reprices the whole period) is not offered: use "graduated", where each ' +
        'unit is priced by the tier it falls in, so that an event never changes the cost of earlier ones',
      'model',
    );
  }
  if (!(PRICE_MODELS as readonly string[]).includes(model)) {
    return failure('unknown_price_model', `model must be one of ${PRICE_MODELS.join(', ')}`, 'model');
  }
  const m = model as PriceModel;
  for (const other of PRICE_MODELS) {
    if (other === m) continue;
    for (const field of MODEL_FIELDS[other]) {
      if (input[field] !== undefined && !MODEL_FIELDS[m].includes(field)) {
        return failure('price_field_not_of_model', `${field} belongs to model "${other}", not "${m}"`, field);
      }
    }
  }
  for (const field of MODEL_FIELDS[m]) {
    if (input[field] === undefined) return failure('price_field_required', `model "${m}" needs ${field}`, field);
  }
  if (m === 'unit') {
    const unit = parseAmount(input.unit_amount!, 'unit_amount');
    return unit.ok ? { ok: true, value: { model: 'unit', unitAmount: unit.value } } : unit;
  }
  if (m === 'package') {
    const size = input.package_size!;
    if (!Number.isSafeInteger(size) || size < 1) {
      return failure('package_size_must_be_a_positive_integer', 'package_size must be an integer ≥ 1', 'package_size');
    }
    const amount = parseAmount(input.package_amount!, 'package_amount');
    if (!amount.ok) return amount;
    return { ok: true, value: { model: 'package', packageSize: size, packageAmount: amount.value } };
  }
  return parseTiers(input.tiers!);
}

function parseTiers(raw: NonNullable<PriceInput['tiers']>): Outcome<PriceTerms> {
  if (raw.length === 0) return failure('tiers_invalid', 'tiers must hold at least one tier', 'tiers');
  if (raw.length > TIERS_MAX) return failure('tiers_invalid', `at most ${TIERS_MAX} tiers`, 'tiers');
  const tiers: Tier[] = [];
  let previous = 0;
  for (let i = 0; i < raw.length; i++) {
    const t = raw[i]!;
    const param = `tiers[${i}]`;
    const last = i === raw.length - 1;
    if (last && t.up_to !== null) {
      return failure('tiers_invalid', 'the last tier must have up_to null (no bound)', `${param}.up_to`);
    }
    if (!last) {
      if (t.up_to === null || !Number.isSafeInteger(t.up_to) || t.up_to < 1) {
        return failure(
          'tiers_invalid',
          `${param}.up_to must be an integer ≥ 1 (only the last is null)`,
          `${param}.up_to`,
        );
      }
      if (t.up_to <= previous) {
        return failure(
          'tiers_invalid',
          `${param}.up_to must be above the previous tier's (${previous})`,
          `${param}.up_to`,
        );
      }
      previous = t.up_to;
    }
    const unit = parseAmount(t.unit_amount, `${param}.unit_amount`);
    if (!unit.ok) return unit;
    let flat: string | null = null;
    if (t.flat_amount !== undefined && t.flat_amount !== null) {
      const f = parseAmount(t.flat_amount, `${param}.flat_amount`);
      if (!f.ok) return f;
      flat = f.value === '0' ? null : f.value;
    }
    tiers.push({ upTo: t.up_to, unitAmount: unit.value, flatAmount: flat });
  }
  return { ok: true, value: { model: 'graduated', tiers } };
}

/** Whether two terms charge the same (a PUT of the same terms makes no new version). */
export function sameTerms(a: PriceTerms, b: PriceTerms): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const dec = (s: string): Decimal => parseDecimal(s)!;

/** C(q): the exact cumulative price of q units of a period under graduated or package terms. */
export function cumulativePrice(terms: PriceTerms, q: Decimal): Decimal {
  if (terms.model === 'unit') return multiplyDecimal(q, dec(terms.unitAmount));
  if (terms.model === 'package') {
    const divisor = BigInt(terms.packageSize) * 10n ** BigInt(q.scale);
    const blocks = (q.coef + divisor - 1n) / divisor;
    return multiplyDecimal(decimalOfInteger(blocks), dec(terms.packageAmount));
  }
  let total = DECIMAL_ZERO;
  let lower = DECIMAL_ZERO;
  for (const tier of terms.tiers) {
    if (compareDecimal(q, lower) <= 0) break; // the period has not entered this tier
    const upper = tier.upTo === null ? null : decimalOfInteger(tier.upTo);
    const top = upper === null || compareDecimal(q, upper) < 0 ? q : upper;
    total = addDecimal(total, multiplyDecimal(subtractDecimal(top, lower), dec(tier.unitAmount)));
    if (tier.flatAmount !== null) total = addDecimal(total, dec(tier.flatAmount));
    if (upper === null) break;
    lower = upper;
  }
  return total;
}

/**
 * The cost of an event of `quantity` units: per event under a unit price; under a period price,
 * ceil(C(before + quantity)) − ceil(C(before)) with `before` the period's completed quantity.
 * Fails (rather than rounding) when the cost leaves the exact integer range.
 */
export function eventCost(terms: PriceTerms, before: Decimal, quantity: number): Outcome<number> {
  const q = decimalFromNumber(quantity);
  if (!q) return failure('quantity_must_be_a_non_negative_number', 'quantity must be a finite number ≥ 0', 'quantity');
  if (terms.model !== 'unit') {
    const priced = periodEventCost(terms, before, q, undefined);
    return priced.ok ? { ok: true, value: priced.value.cost } : priced;
  }
  const cost = multiplyCeil(q, dec(terms.unitAmount));
  if (cost > BigInt(AMOUNT_MAX))
    return failure('amount_out_of_range', 'the cost of this event is too large', 'quantity');
  return { ok: true, value: Number(cost) };
}

/** ceil(C(q)) of a period with its quantity: the next event of the period starts from it instead of computing it. */
export interface PeriodCeiling {
  quantity: Decimal;
  ceil: bigint;
}

const sameDecimal = (a: Decimal, b: Decimal) => a.coef === b.coef && a.scale === b.scale;

/**
 * An event of a graduated or package price: eventCost's ceil(C(before + q)) − ceil(C(before)), taking
 * ceil(C(before)) from `known` when it is of the same quantity (it is a pure function of the terms and the
 * quantity), and answering ceil(C(before + q)) for the next event of the period.
 */
export function periodEventCost(
  terms: PriceTerms,
  before: Decimal,
  q: Decimal,
  known: PeriodCeiling | undefined,
): Outcome<{ cost: number; after: PeriodCeiling }> {
  const ceilBefore =
    known !== undefined && sameDecimal(known.quantity, before)
      ? known.ceil
      : ceilDecimal(cumulativePrice(terms, before));
  const quantity = addDecimal(before, q);
  const ceil = ceilDecimal(cumulativePrice(terms, quantity));
  const cost = ceil - ceilBefore;
  if (cost > BigInt(AMOUNT_MAX))
    return failure('amount_out_of_range', 'the cost of this event is too large', 'quantity');
  return { ok: true, value: { cost: Number(cost), after: { quantity, ceil } } };
}
