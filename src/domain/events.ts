/**
 * A usage event as the API takes it (EventInput), as its spellings are folded into one shape
 * (normalizeEvent), and as it is recorded (EventRow); the events request (IngestRequest) and the
 * fingerprint that decides whether a repeated client id is the same event. The plan of a request
 * is domain/ingest-plan.ts.
 */
import { metadataViolation } from './metadata.js';
import { canonicalJson, sha256Hex } from '../lib/canonical.js';
import { parseRfc3339 } from './time.js';
import type { Allocation } from './grant-lots.js';
import type { EventState } from './holds.js';
import { failure, type Outcome } from './outcome.js';
import type { PriceModel } from './pricing.js';

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
  /** A lease of the account's balance the event's cost is taken from first (contract "Leases"). */
  lease_id?: string;
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
  /** The lease its cost is taken from first (a complete or cancelled event only), or null. */
  leaseId: string | null;
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
  if (input.lease_id !== undefined && state === 'pending')
    return failure(
      'lease_not_for_pending_events',
      `${param}: a pending event holds its own cost and cannot draw from a lease`,
      `${param}.lease_id`,
      { index },
    );
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
      leaseId: input.lease_id ?? null,
    },
  };
}

export { balanceKey, companyScopedKey, pricePeriodKey } from '../lib/keys.js';

/**
 * The fingerprint that decides whether a repeated client id is "the same event": SHA-256 of the canonical JSON of
 * `{a: account, t: type, q: quantity, o: override, m: metadata, s: state, ts?: timestamp}` (keys sorted, as
 * `canonicalJson` writes them). Only a given timestamp is content (a retry without one is the same event): hashes
 * of events without a timestamp are those they always were. The text is written here field by field, in that
 * sorted order (a, m, o, q, s, t, ts), rather than through `canonicalJson`: the same bytes (a test holds it), for
 * a third of the CPU on the ingest path of events with client ids.
 */
export function eventContentHash(accountId: string, e: NormalizedEvent): string {
  const o = e.override;
  const text =
    `{"a":${JSON.stringify(accountId)},"m":${e.metadata === null ? 'null' : canonicalJson(e.metadata)},"o":` +
    (o === null ? 'null' : `{"amount":${JSON.stringify(o.amount)},"denomination":${JSON.stringify(o.denomination)}}`) +
    `,"q":${JSON.stringify(e.quantity)},"s":${JSON.stringify(e.state)},"t":${JSON.stringify(e.type)}` +
    (e.timestampMs === null ? '}' : `,"ts":${JSON.stringify(e.timestampMs)}}`);
  return sha256Hex(text);
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
  /** The lease the event named (contract "Leases"), whether or not it was open and drew from it. */
  leaseId: string | null;
  /** Planning only, never stored: the units of its cost its open lease covers (domain/leases.ts coveredBy). */
  leaseCovered?: number;
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
