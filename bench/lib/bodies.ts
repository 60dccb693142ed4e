/**
 * Request bodies for event submissions, built once before a phase so the load generator does
 * not spend its CPU (shared with the server) on JSON. Each batch knows the cost of every event
 * in it; costs vary between events so that a unit lost or doubled shows in the totals.
 */
import { DENOMINATION, EVENT_TYPE, type Pricing } from './options.js';

/** Distinct bodies per request size; requests cycle through them. */
export const BODY_VARIANTS = 8;
const MAX_EVENT_COST = 17;

export type EventState = 'complete' | 'pending';

export interface EventBatch {
  body: Buffer;
  /** Cost of each event, in request order. */
  costs: readonly number[];
  total: number;
  state: EventState;
}

/** Deterministic cost of event `index` of variant `variant`: 1 … MAX_EVENT_COST units. */
export function eventCost(variant: number, index: number): number {
  return 1 + ((variant * 7919 + index * 104_729) % MAX_EVENT_COST);
}

/** The price that `pricing` sets on EVENT_TYPE before any event (none for `override`): 1 unit per unit either way. */
export function benchPrice(pricing: Pricing): Record<string, unknown> | undefined {
  if (pricing === 'unit') return { denomination: DENOMINATION, unit_amount: '1' };
  if (pricing === 'graduated')
    return {
      denomination: DENOMINATION,
      model: 'graduated',
      tiers: [
        { up_to: 1_000_000_000, unit_amount: '1' },
        { up_to: null, unit_amount: '1' },
      ],
    };
  return undefined;
}

export function eventBatch(
  size: number,
  variant: number,
  state: EventState,
  pricing: Pricing = 'override',
): EventBatch {
  const costs = Array.from({ length: size }, (_, i) => eventCost(variant, i));
  const events = costs.map((amount) => ({
    type: EVENT_TYPE,
    ...(pricing === 'override' ? { cost_override: { amount, denomination: DENOMINATION } } : { quantity: amount }),
    // Complete is the default state: send the field only for holds.
    ...(state === 'pending' ? { state } : {}),
  }));
  return {
    body: Buffer.from(JSON.stringify(events)),
    costs,
    total: costs.reduce((a, b) => a + b, 0),
    state,
  };
}

export function eventBatches(
  size: number,
  state: EventState = 'complete',
  pricing: Pricing = 'override',
): EventBatch[] {
  return Array.from({ length: BODY_VARIANTS }, (_, variant) => eventBatch(size, variant, state, pricing));
}

export const SETTLE_BODY = Buffer.from(JSON.stringify({ state: 'complete' }));
