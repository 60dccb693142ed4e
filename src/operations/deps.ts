import type { EmailSender } from '../email/types.js';
import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { ProcessorFactory } from '../processors/types.js';
import type { Store, Tx } from '../store/types.js';
import type { Ledger } from '../ledger/ledger.js';
import type { WebhookSettings } from './webhooks.js';

/**
 * What every operation may use, built once in the composition root (server.ts): the store
 * interface, the injected clock, the payment processors, the ledger with the server's balance
 * effects, the webhook and usage settings, the identity settings (sessions, the email sender), and
 * the box of the secrets at rest.
 */
export interface Deps {
  store: Store;
  clock: Clock;
  processors: ProcessorFactory;
  ledger: Ledger;
  webhooks: WebhookSettings;
  usage: UsageSettings;
  /** Seals and opens the secrets stored at rest (operations/secrets.ts), with the configured keys. */
  secrets: SecretBox;
  identity: IdentitySettings;
}

/** Console sessions and the emails that verify an address or reset a password. */
export interface IdentitySettings {
  /** BILLING_PUBLIC_URL (or http://HOST:PORT), without a trailing slash: the base of emailed links. */
  publicUrl: string;
  /** BILLING_SESSION_IDLE_MINUTES: a session ends this long after its last request. */
  sessionIdleMs: number;
  email: EmailSender;
}

/** How old usage may be: when an event may have happened, and how long hourly rollups are kept. */
export interface UsageSettings {
  /** BILLING_EVENT_MAX_AGE_DAYS: an event's `timestamp` may be at most this old. */
  eventMaxAgeMs: number;
  /** BILLING_USAGE_RETENTION_DAYS: rollups of older hours are deleted, and cannot be asked for. */
  retentionMs: number;
}

/**
 * A change made in one database transaction. An operation that is one transaction checks its input
 * (and does what must come first, such as a processor call) and returns its command; whoever runs the
 * command opens the transaction: `deps.store.write(command)`, or the HTTP layer's command runner
 * (http/idempotency.ts, runCommand), which records the request's Idempotency-Key answer in the same
 * transaction. So an operation never decides alone where its transaction ends.
 */
export type Command<T> = (tx: Tx) => Promise<T>;
