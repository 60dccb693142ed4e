/**
 * `billing.events` (/v1/events, /v1/accounts/{account_id}/events): usage events, ingested, read, settled and
 * listed; one resource of `Billing` (billing.ts), whose `check` takes the same events.
 */
import {
  type Answer,
  type Core,
  type JsonBody,
  type Query,
  type RequestOptions,
  type Schemas,
  page,
  required,
  unwrap,
} from '../core.js';
import { type PagePromise, paginate } from '../pagination.js';

export type BillingEvent = Schemas['Event'];
/** One usage event of an ingest request. */
export type EventInput = Extract<JsonBody<'createAccountEvents'>, readonly unknown[]>[number];
export type IngestResult = Answer<'createAccountEvents'>;
export type EventSettleParams = JsonBody<'settleEvent'>;
export type EventListParams = Query<'listEvents'>;

export interface IngestOptions extends RequestOptions {
  /** Refuse the whole request (402 `insufficient_balance`) if a balance it draws from has `available < 0`. */
  gateOnBalance?: boolean;
}

/** Usage events: priced and deducted before the API answers; pending ones hold their cost until settled. */
export class Events {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * Records up to 1,000 events of one account, all or nothing (POST /v1/accounts/{account_id}/events). Give events
   * an `id` to make them safe to send again in any later request too.
   */
  ingest(accountId: string, events: EventInput[], options: IngestOptions = {}): Promise<IngestResult> {
    const c = this.#core;
    const path = { account_id: required('accountId', accountId) };
    const query = options.gateOnBalance === undefined ? {} : { gate_on_balance: options.gateOnBalance };
    return unwrap(
      c.api.POST('/v1/accounts/{account_id}/events', {
        params: { path, query },
        body: events,
        ...c.init(options),
      }),
    );
  }

  /** An event (GET /v1/events/{event_id}). */
  retrieve(eventId: string, options?: RequestOptions): Promise<BillingEvent> {
    const c = this.#core;
    const path = { event_id: required('eventId', eventId) };
    return unwrap(c.api.GET('/v1/events/{event_id}', { params: { path }, ...c.init(options) })).then((e) => e.data);
  }

  /** Completes (optionally at a final cost) or cancels a pending event (PUT /v1/events/{event_id}). */
  settle(eventId: string, body: EventSettleParams, options?: RequestOptions): Promise<BillingEvent> {
    const c = this.#core;
    const path = { event_id: required('eventId', eventId) };
    return unwrap(c.api.PUT('/v1/events/{event_id}', { params: { path }, body, ...c.init(options) })).then(
      (e) => e.data,
    );
  }

  /** The company's events, newest `timestamp` first; filters `account_id`, `type`, `state`, … (GET /v1/events). */
  list(params: EventListParams = {}, options?: RequestOptions): PagePromise<BillingEvent> {
    const c = this.#core;
    return paginate((cursor) =>
      unwrap(c.api.GET('/v1/events', { params: { query: page(params, cursor) }, ...c.init(options) })),
    );
  }
}
