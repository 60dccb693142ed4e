import type { EmailSender } from '../email/types.js';
import type { Clock } from '../lib/clock.js';
import type { ProcessorFactory } from '../processors/types.js';
import type { Store } from '../store/types.js';
import type { Ledger } from './ledger.js';
import type { WebhookSettings } from './webhook-delivery.js';

/**
 * What every operation may use, built once in the composition root (server.ts): the store
 * interface, the injected clock, the payment processors, the ledger with the server's balance
 * effects, the webhook and usage settings, and the identity settings (sessions, the email sender).
 */
export interface Deps {
  store: Store;
  clock: Clock;
  processors: ProcessorFactory;
  ledger: Ledger;
  webhooks: WebhookSettings;
  usage: UsageSettings;
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

export const DAY_MS = 86_400_000;

/** Default and largest page of every list endpoint. */
export const PAGE_LIMIT_DEFAULT = 20;
export const PAGE_LIMIT_MAX = 100;

/** How long an Idempotency-Key and its first response are kept (the contract says at least 24 hours). */
export const IDEMPOTENCY_RETENTION_MS = 48 * 60 * 60 * 1000;
