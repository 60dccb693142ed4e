/**
 * `billing.webhooks` (/v1/webhooks): the company's webhook subscriptions, created, listed and deleted, and the
 * check of a delivery's signature (../webhooks.ts, which a receiver without a client uses as it is); one resource
 * of `Billing` (billing.ts).
 */
import {
  type Answer,
  type Core,
  type JsonBody,
  type Query,
  type RequestOptions,
  page,
  required,
  unwrap,
} from '../core.js';
import { type PagePromise, paginate } from '../pagination.js';
import { type WebhookHeaders, type WebhookPayload, verifyWebhook } from '../webhooks.js';

/** A webhook subscription as listed (without its secret). */
export type WebhookSubscription = Answer<'listWebhooks'>['data'][number];
/** A webhook subscription as created: its `secret` (`whsec_…`) is shown only here. */
export type CreatedWebhook = Answer<'createWebhook'>['data'];
export type WebhookCreateParams = JsonBody<'createWebhook'>;
export type WebhookListParams = Query<'listWebhooks'>;
export type WebhookDeleted = Answer<'deleteWebhook'>;

/** Webhook subscriptions, and the check of a delivery's signature. */
export class Webhooks {
  readonly #core: Core;
  /** @internal */
  constructor(core: Core) {
    this.#core = core;
  }

  /** Subscribes a URL to one notification type; the answer's `secret` is shown only here (POST /v1/webhooks). */
  create(body: WebhookCreateParams, options?: RequestOptions): Promise<CreatedWebhook> {
    const c = this.#core;
    return unwrap(c.api.POST('/v1/webhooks', { body, ...c.init(options) })).then((w) => w.data);
  }

  /** The company's subscriptions, newest first, without secrets (GET /v1/webhooks). */
  list(params: WebhookListParams = {}, options?: RequestOptions): PagePromise<WebhookSubscription> {
    const c = this.#core;
    return paginate((cursor) =>
      unwrap(c.api.GET('/v1/webhooks', { params: { query: page(params, cursor) }, ...c.init(options) })),
    );
  }

  /** Deletes a subscription: nothing more is sent to it (DELETE /v1/webhooks/{webhook_id}). */
  delete(webhookId: string, options?: RequestOptions): Promise<WebhookDeleted> {
    const c = this.#core;
    const path = { webhook_id: required('webhookId', webhookId) };
    return unwrap(c.api.DELETE('/v1/webhooks/{webhook_id}', { params: { path }, ...c.init(options) }));
  }

  /**
   * The payload of a delivery, after checking its signature against `secret` and its timestamp (five minutes);
   * throws WebhookVerificationError otherwise. `rawBody` is the body exactly as received.
   */
  verify(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookPayload {
    return verifyWebhook(rawBody, headers, secret);
  }
}
