/**
 * A small local fake of the Stripe HTTP API: just the endpoints the Stripe processor uses, so
 * tests can drive the real SDK over real HTTP. It behaves like Stripe where the adapter
 * depends on it: form-encoded bodies in bracket notation, Bearer keys, Stripe-shaped objects
 * and errors, test tokens, and idempotency keys that replay the first stored response.
 * Every request is recorded, and faults (500s, dropped connections) can be injected.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  answerChallenge,
  type ChallengeAnswer,
  HOSTED_PAGE_PREFIX,
  hostedPage,
  pendingReturnUrl,
  requireAction,
  returnLocation,
} from './fake-stripe-3ds.js';
import {
  errorReply,
  type FormObject,
  headerValue,
  ID_RANDOM_BYTES,
  invalid,
  type Json,
  missing,
  newId,
  nowSeconds,
  obj,
  parseStripeForm,
  readBody,
  type Reply,
  send,
  sendHtml,
  str,
  stringRecord,
} from './fake-stripe-wire.js';

export { type FormObject, type FormValue, parseStripeForm } from './fake-stripe-wire.js';

export const FAKE_STRIPE_API_KEY = 'rk_test_fake_stripe_restricted_key';
/** Stripe refuses USD charges below 50 cents. */
export const STRIPE_MINIMUM_CHARGE_USD_CENTS = 50;
/** Fake test cards never expire within a test run. */
export const FAKE_CARD_EXP_MONTH = 12;
export const FAKE_CARD_EXP_YEAR = 2034;
const KEY_SUFFIX_SHOWN_CHARS = 4;

/**
 * How an injected fault hits a request:
 * - `http_500`: answer 500 api_error without doing anything (nothing stored for the key);
 * - `drop_before`: close the connection without doing anything;
 * - `drop_after`: do the work and store the response under the idempotency key, then close
 *   the connection unanswered, as when a response is lost on the way back.
 */
export type FaultMode = 'http_500' | 'drop_before' | 'drop_after';

/**
 * What a card does when an off-session payment needs the cardholder (Stripe does both): a card error, or the intent
 * left `requires_action` (for Stripe's client SDKs). On session with a return_url it always redirects to the fake's
 * hosted page (fake-stripe-3ds.ts), unless `onSessionNextAction` says Stripe answered `use_stripe_sdk` instead.
 */
export type AuthenticationMode = 'card_error' | 'requires_action';

export interface RecordedRequest {
  method: string;
  path: string;
  body: FormObject;
  idempotencyKey: string | null;
  fault: FaultMode | null;
  /** true when the answer was a stored response replayed for the idempotency key */
  replayed: boolean;
}

type CardBehaviour = 'ok' | 'decline_at_attach' | 'decline_charges' | 'needs_authentication';

interface TestCard {
  brand: string;
  last4: string;
  behaviour: CardBehaviour;
}

const TEST_CARDS: Readonly<Record<string, TestCard>> = {
  tok_visa: { brand: 'visa', last4: '4242', behaviour: 'ok' },
  tok_mastercard: { brand: 'mastercard', last4: '4444', behaviour: 'ok' },
  tok_chargeDeclined: { brand: 'visa', last4: '0002', behaviour: 'decline_at_attach' },
  tok_chargeCustomerFail: { brand: 'visa', last4: '0341', behaviour: 'decline_charges' },
  tok_authenticationRequired: { brand: 'visa', last4: '3184', behaviour: 'needs_authentication' },
};

interface StoredReply extends Reply {
  fingerprint: string;
}
interface Fault {
  mode: FaultMode;
  path: string | null;
}

export interface FakeCustomer extends Json {
  id: string;
  object: 'customer';
  name: string | null;
  email: string | null;
  metadata: Record<string, string>;
  invoice_settings: { default_payment_method: string | null };
}

export interface FakePaymentMethod extends Json {
  id: string;
  object: 'payment_method';
  type: 'card';
  customer: string | null;
  card: { brand: string; last4: string; exp_month: number; exp_year: number; funding: string; country: string };
}

export interface FakePaymentIntent extends Json {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  currency: string;
  customer: string | null;
  payment_method: string | null;
  status: string;
  description: string | null;
  metadata: Record<string, string>;
}

// ---------------------------------------------------------------------------------------------

export class FakeStripe {
  readonly host = '127.0.0.1';
  readonly protocol = 'http' as const;
  readonly apiKey: string;
  readonly requests: RecordedRequest[] = [];
  readonly customers = new Map<string, FakeCustomer>();
  readonly paymentMethods = new Map<string, FakePaymentMethod>();
  /** Every PaymentIntent created, in order, including failed ones (as Stripe keeps them). */
  readonly paymentIntents: FakePaymentIntent[] = [];
  authenticationMode: AuthenticationMode = 'card_error';
  onSessionNextAction: 'redirect_to_url' | 'use_stripe_sdk' = 'redirect_to_url';

  private readonly server: Server;
  private readonly behaviourByPaymentMethod = new Map<string, CardBehaviour>();
  private readonly stored = new Map<string, StoredReply>();
  private faults: Fault[] = [];

  private constructor(apiKey: string) {
    this.apiKey = apiKey;
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  static async start(options: { apiKey?: string } = {}): Promise<FakeStripe> {
    const fake = new FakeStripe(options.apiKey ?? FAKE_STRIPE_API_KEY);
    await new Promise<void>((resolve) => fake.server.listen(0, fake.host, resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** SDK connection options (host, port, protocol) that point at this fake. */
  get connection(): { host: string; port: number; protocol: 'http' } {
    return { host: this.host, port: this.port, protocol: this.protocol };
  }

  /** The next `count` requests (to `path`, if given) fail in the given way. */
  failNext(count: number, mode: FaultMode = 'http_500', path: string | null = null): void {
    for (let i = 0; i < count; i += 1) this.faults.push({ mode, path });
  }

  requestsTo(method: string, path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && r.path === path);
  }

  succeededPaymentIntents(): FakePaymentIntent[] {
    return this.paymentIntents.filter((pi) => pi.status === 'succeeded');
  }

  reset(): void {
    this.requests.length = 0;
    this.paymentIntents.length = 0;
    this.customers.clear();
    this.paymentMethods.clear();
    this.behaviourByPaymentMethod.clear();
    this.stored.clear();
    this.faults = [];
    this.authenticationMode = 'card_error';
    this.onSessionNextAction = 'redirect_to_url';
  }

  /** The PaymentIntent of that id (failed ones included). */
  paymentIntent(id: string): FakePaymentIntent | undefined {
    return this.paymentIntents.find((pi) => pi.id === id);
  }

  /** The hosted 3-D Secure page of an intent (what `next_action.redirect_to_url.url` names). */
  hostedPageUrl(pi: { id: string }): string {
    return `${this.protocol}://${this.host}:${this.port}${HOSTED_PAGE_PREFIX}${pi.id}`;
  }

  /** Stripe's own end of an authentication nobody completed: the intent fails it, as if declined. */
  expireAuthentication(id: string): void {
    const pi = this.paymentIntent(id);
    if (!pi || pendingReturnUrl(pi) === null) throw new Error(`${id} does not wait at the hosted page`);
    answerChallenge(pi, 'expire', () => newId('ch'));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve, reject) => this.server.close((e) => (e ? reject(e) : resolve())));
  }

  // -------------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const idempotencyKey = headerValue(req, 'idempotency-key');
    const fault = this.takeFault(path);
    const record: RecordedRequest = {
      method,
      path,
      body: raw === null ? {} : parseStripeForm(raw),
      idempotencyKey,
      fault: fault?.mode ?? null,
      replayed: false,
    };
    this.requests.push(record);
    if (raw === null) return send(res, invalid('request body too large'));
    // The hosted page is the customer's browser's, not the API's: no key, no idempotency.
    if (path.startsWith(HOSTED_PAGE_PREFIX)) return this.hostedPage(res, method, path, record.body);
    if (fault?.mode === 'drop_before') return void res.socket?.destroy();
    if (fault?.mode === 'http_500') {
      return send(res, errorReply(500, { type: 'api_error', message: 'Injected fake failure' }));
    }
    const reply = this.answer(req, record);
    if (fault?.mode === 'drop_after') return void res.socket?.destroy();
    send(res, reply, record.replayed);
  }

  private takeFault(path: string): Fault | undefined {
    const index = this.faults.findIndex((f) => f.path === null || f.path === path);
    if (index < 0) return undefined;
    return this.faults.splice(index, 1)[0];
  }

  /** Authentication first, then Stripe's idempotency: same key and body replays the stored reply. */
  private answer(req: IncomingMessage, record: RecordedRequest): Reply {
    const presented = /^Bearer (.+)$/.exec(headerValue(req, 'authorization') ?? '')?.[1];
    if (presented !== this.apiKey) return this.unauthorized(presented);
    if (record.idempotencyKey === null) return this.route(record);
    const fingerprint = JSON.stringify([record.method, record.path, record.body]);
    const earlier = this.stored.get(record.idempotencyKey);
    if (earlier && earlier.fingerprint !== fingerprint) {
      return errorReply(400, {
        type: 'idempotency_error',
        message: `Keys for idempotent requests can only be used with the same parameters they were first used with.`,
      });
    }
    if (earlier) {
      record.replayed = true;
      return earlier;
    }
    const reply = this.route(record);
    // A snapshot, as Stripe stores it: later changes to the object do not alter the replay.
    this.stored.set(record.idempotencyKey, { ...structuredClone(reply), fingerprint });
    return reply;
  }

  private unauthorized(presented: string | undefined): Reply {
    const shown = presented ? presented.slice(-KEY_SUFFIX_SHOWN_CHARS) : '';
    return errorReply(401, {
      type: 'invalid_request_error',
      message: presented ? `Invalid API Key provided: ****${shown}` : 'You did not provide an API key.',
    });
  }

  private route(r: RecordedRequest): Reply {
    const segments = r.path.split('/').filter(Boolean);
    const [version, resource, id, action] = segments;
    if (version !== 'v1' || segments.length > 4) return this.unrecognized(r);
    if (r.method === 'GET' && resource === 'payment_intents' && id !== undefined && !action) {
      const pi = this.paymentIntent(id);
      return pi ? { status: 200, body: pi } : missing('payment_intent', id);
    }
    if (r.method !== 'POST') return this.unrecognized(r);
    if (resource === 'payment_intents' && id !== undefined && action === 'confirm') {
      return this.confirmPaymentIntent(id, r.body);
    }
    if (resource === 'payment_intents' && id !== undefined && action === 'cancel') return this.cancelPaymentIntent(id);
    if (resource === 'customers' && id === undefined) return this.createCustomer(r.body);
    if (resource === 'customers' && id !== undefined && !action) return this.updateCustomer(id, r.body);
    if (resource === 'payment_methods' && id === undefined) return this.createPaymentMethod(r.body);
    if (resource === 'payment_methods' && id !== undefined && action === 'attach') {
      return this.attachPaymentMethod(id, r.body);
    }
    if (resource === 'payment_intents' && id === undefined) return this.createPaymentIntent(r.body);
    return this.unrecognized(r);
  }

  private unrecognized(r: RecordedRequest): Reply {
    return errorReply(404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${r.method}: ${r.path}).`,
    });
  }

  private createCustomer(body: FormObject): Reply {
    const customer: FakeCustomer = {
      id: newId('cus'),
      object: 'customer',
      created: nowSeconds(),
      livemode: false,
      name: str(body, 'name') ?? null,
      email: str(body, 'email') ?? null,
      metadata: stringRecord(obj(body, 'metadata')),
      invoice_settings: { default_payment_method: null },
    };
    this.customers.set(customer.id, customer);
    return { status: 200, body: customer };
  }

  private updateCustomer(id: string, body: FormObject): Reply {
    const customer = this.customers.get(id);
    if (!customer) return missing('customer', id);
    const defaultPm = str(obj(body, 'invoice_settings'), 'default_payment_method');
    if (defaultPm !== undefined && this.paymentMethods.get(defaultPm)?.customer !== id) {
      return invalid(
        `No such PaymentMethod: '${defaultPm}'; it must be attached to customer ${id}`,
        'invoice_settings[default_payment_method]',
        'resource_missing',
      );
    }
    if (defaultPm !== undefined) customer.invoice_settings.default_payment_method = defaultPm;
    const name = str(body, 'name');
    const email = str(body, 'email');
    if (name !== undefined) customer.name = name;
    if (email !== undefined) customer.email = email;
    Object.assign(customer.metadata, stringRecord(obj(body, 'metadata')));
    return { status: 200, body: customer };
  }

  private createPaymentMethod(body: FormObject): Reply {
    if (str(body, 'type') !== 'card') return invalid('Only card payment methods are faked', 'type');
    const token = str(obj(body, 'card'), 'token');
    if (token === undefined) return invalid('Missing required param: card[token].', 'card[token]', 'parameter_missing');
    const card = Object.hasOwn(TEST_CARDS, token) ? TEST_CARDS[token] : undefined;
    if (!card) return missing('token', token, 'card[token]');
    const pm: FakePaymentMethod = {
      id: newId('pm'),
      object: 'payment_method',
      type: 'card',
      created: nowSeconds(),
      livemode: false,
      customer: null,
      metadata: {},
      billing_details: { address: null, email: null, name: null, phone: null },
      card: {
        brand: card.brand,
        last4: card.last4,
        exp_month: FAKE_CARD_EXP_MONTH,
        exp_year: FAKE_CARD_EXP_YEAR,
        funding: 'credit',
        country: 'US',
      },
    };
    this.paymentMethods.set(pm.id, pm);
    this.behaviourByPaymentMethod.set(pm.id, card.behaviour);
    return { status: 200, body: pm };
  }

  private attachPaymentMethod(id: string, body: FormObject): Reply {
    const pm = this.paymentMethods.get(id);
    if (!pm) return missing('PaymentMethod', id);
    const customerId = str(body, 'customer');
    if (customerId === undefined) return invalid('Missing required param: customer.', 'customer', 'parameter_missing');
    if (!this.customers.has(customerId)) return missing('customer', customerId, 'customer');
    if (pm.customer !== null && pm.customer !== customerId) {
      return invalid(`The payment method ${id} is already attached to another customer.`);
    }
    if (this.behaviourByPaymentMethod.get(id) === 'decline_at_attach') {
      return errorReply(402, {
        type: 'card_error',
        code: 'card_declined',
        decline_code: 'generic_decline',
        message: 'Your card was declined.',
        payment_method: pm,
      });
    }
    pm.customer = customerId;
    return { status: 200, body: pm };
  }

  private createPaymentIntent(body: FormObject): Reply {
    const invalidParams = this.invalidPaymentIntentParams(body);
    if (invalidParams) return invalidParams;
    const pmId = str(body, 'payment_method') ?? null;
    const id = newId('pi');
    const pi: FakePaymentIntent = {
      id,
      client_secret: `${id}_secret_${randomBytes(ID_RANDOM_BYTES).toString('hex')}`,
      object: 'payment_intent',
      created: nowSeconds(),
      livemode: false,
      amount: Number(str(body, 'amount')),
      amount_capturable: 0,
      amount_received: 0,
      currency: str(body, 'currency') ?? '',
      customer: str(body, 'customer') ?? null,
      payment_method: pmId,
      payment_method_types: ['card'],
      capture_method: 'automatic',
      confirmation_method: 'automatic',
      description: str(body, 'description') ?? null,
      metadata: stringRecord(obj(body, 'metadata')),
      status: 'requires_confirmation',
      latest_charge: null,
      last_payment_error: null,
      next_action: null,
    };
    this.paymentIntents.push(pi);
    if (str(body, 'confirm') !== 'true' || pmId === null) return { status: 200, body: pi };
    return this.confirm(pi, this.behaviourByPaymentMethod.get(pmId) ?? 'ok', body);
  }

  /** Confirms again (Stripe's way to bring the customer back to an intent that needs them), maybe with a new card. */
  private confirmPaymentIntent(id: string, body: FormObject): Reply {
    const pi = this.paymentIntent(id);
    if (!pi) return missing('payment_intent', id);
    if (!['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(pi.status)) {
      const message = `You cannot confirm this PaymentIntent because it has a status of ${pi.status}.`;
      return invalid(message, undefined, 'payment_intent_unexpected_state');
    }
    const pmId = str(body, 'payment_method') ?? pi.payment_method;
    if (pmId === null)
      return invalid('You cannot confirm this PaymentIntent without a payment method.', 'payment_method');
    const pm = this.paymentMethods.get(pmId);
    if (!pm) return missing('PaymentMethod', pmId, 'payment_method');
    if (pm.customer !== pi.customer) {
      return invalid(
        `The provided PaymentMethod ${pmId} is not attached to customer ${pi.customer}.`,
        'payment_method',
      );
    }
    pi.payment_method = pmId;
    pi.last_payment_error = null;
    pi.next_action = null;
    return this.confirm(pi, this.behaviourByPaymentMethod.get(pmId) ?? 'ok', body);
  }

  private cancelPaymentIntent(id: string): Reply {
    const pi = this.paymentIntent(id);
    if (!pi) return missing('payment_intent', id);
    const cancelable = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action'];
    if (!cancelable.includes(pi.status)) {
      const message = `You cannot cancel this PaymentIntent because it has a status of ${pi.status}.`;
      return invalid(message, undefined, 'payment_intent_unexpected_state');
    }
    pi.status = 'canceled';
    pi.cancellation_reason = 'abandoned';
    pi.canceled_at = nowSeconds();
    pi.next_action = null;
    return { status: 200, body: pi };
  }

  /** GET: the page; POST `decision`: the answer, then back to the return_url (303), as Stripe's hosted page does. */
  private hostedPage(res: ServerResponse, method: string, path: string, body: FormObject): void {
    const pi = this.paymentIntent(path.slice(HOSTED_PAGE_PREFIX.length));
    const returnUrl = pi ? pendingReturnUrl(pi) : null;
    const decision = str(body, 'decision');
    if (!pi) sendHtml(res, 404, '<!doctype html><title>Not found</title><h1>No such authentication</h1>');
    else if (method !== 'POST' || returnUrl === null) sendHtml(res, 200, hostedPage(pi, returnUrl !== null));
    else if (decision !== 'approve' && decision !== 'decline') sendHtml(res, 400, hostedPage(pi, true));
    else {
      const succeeded = answerChallenge(pi, decision satisfies ChallengeAnswer, () => newId('ch'));
      res.writeHead(303, { Location: returnLocation(returnUrl, pi, succeeded), 'Content-Length': 0 });
      res.end();
    }
  }

  private invalidPaymentIntentParams(body: FormObject): Reply | null {
    const amount = str(body, 'amount');
    if (amount === undefined || !/^\d+$/.test(amount))
      return invalid('Invalid integer: amount', 'amount', 'parameter_invalid_integer');
    if (Number(amount) < STRIPE_MINIMUM_CHARGE_USD_CENTS) {
      return invalid('Amount must be at least $0.50 usd', 'amount', 'amount_too_small');
    }
    if (!/^[a-z]{3}$/.test(str(body, 'currency') ?? ''))
      return invalid('Missing required param: currency.', 'currency', 'parameter_missing');
    const customerId = str(body, 'customer');
    if (customerId !== undefined && !this.customers.has(customerId)) return missing('customer', customerId, 'customer');
    const pmId = str(body, 'payment_method');
    if (pmId === undefined) return null;
    const pm = this.paymentMethods.get(pmId);
    if (!pm) return missing('PaymentMethod', pmId, 'payment_method');
    if (pm.customer === null || pm.customer !== customerId) {
      return invalid(
        `The provided PaymentMethod ${pmId} is not attached to customer ${customerId ?? '(none)'}.`,
        'payment_method',
      );
    }
    return this.redirectWithoutReturnUrl(body);
  }

  /** Stripe refuses to confirm when redirect-based methods are allowed and no return_url is given. */
  private redirectWithoutReturnUrl(body: FormObject): Reply | null {
    if (str(body, 'confirm') !== 'true' || str(body, 'return_url') !== undefined) return null;
    if (body.payment_method_types !== undefined) return null;
    if (str(obj(body, 'automatic_payment_methods'), 'allow_redirects') === 'never') return null;
    return invalid(
      'This PaymentIntent is configured to accept payment methods that may redirect; you must provide a `return_url`.',
      'return_url',
    );
  }

  private confirm(pi: FakePaymentIntent, behaviour: CardBehaviour, body: FormObject): Reply {
    const offSession = str(body, 'off_session') === 'true';
    if (behaviour === 'decline_charges' || behaviour === 'decline_at_attach') {
      return this.failPayment(pi, 'card_declined', 'generic_decline', 'Your card was declined.');
    }
    if (behaviour === 'needs_authentication' && offSession && this.authenticationMode === 'card_error') {
      const message = 'Your card was declined. This transaction requires authentication.';
      return this.failPayment(pi, 'authentication_required', 'authentication_required', message);
    }
    if (behaviour === 'needs_authentication') {
      const returnUrl = str(body, 'return_url') ?? null;
      const redirects = !offSession && this.onSessionNextAction === 'redirect_to_url';
      requireAction(pi, this.hostedPageUrl(pi), redirects ? returnUrl : null);
      return { status: 200, body: pi };
    }
    pi.status = 'succeeded';
    pi.amount_received = pi.amount;
    pi.latest_charge = newId('ch');
    return { status: 200, body: pi };
  }

  /** As Stripe does: the intent goes back to requires_payment_method and the error carries it. */
  private failPayment(pi: FakePaymentIntent, code: string, declineCode: string, message: string): Reply {
    const lastError = { type: 'card_error', code, decline_code: declineCode, message };
    // The failed payment method is named in the error, no longer on the intent.
    pi.status = 'requires_payment_method';
    pi.last_payment_error = { ...lastError, payment_method: { id: pi.payment_method } };
    pi.payment_method = null;
    return errorReply(402, { ...lastError, type: 'card_error', payment_intent: pi });
  }
}
