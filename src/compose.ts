/**
 * The operations' dependencies, composed once per process from the configuration: the store, the
 * clock, the payment processors, the ledger with the balance effects of a server (what follows a
 * balance change, listed here), the webhook, usage and identity settings (the email sender), and
 * the box of the secrets at rest (its keys from secret-keys.ts). The server (server.ts), the SQLite
 * writer thread (its own ledger, from the same list) and the CLI use it.
 */
import type { Config } from './config.js';
import { type EmailLog, emailSender } from './email/index.js';
import type { Clock } from './lib/clock.js';
import type { SecretBox } from './lib/secret-box.js';
import { DAY_MS } from './domain/time.js';
import type { Deps } from './operations/deps.js';
import { Ledger } from './ledger/ledger.js';
import type { BalanceEffect } from './ledger/posting.js';
import { decideAlertsAfter } from './operations/alerts.js';
import { writeBalanceNotifications } from './operations/notifications.js';
import { planThresholdAlertEffect } from './operations/plans.js';
import { thresholdRefillEffect } from './operations/refills.js';
import type { ProcessorFactory } from './processors/types.js';
import type { Store } from './store/types.js';

/**
 * The balance effects of a server, in the order they run after every posting, inside its
 * transaction: the threshold refill decision, the plan alert, the alerts' decisions, then the notifications
 * (last, so that they see the refill state the others wrote).
 */
export function balanceEffects(): readonly BalanceEffect[] {
  return [thresholdRefillEffect, planThresholdAlertEffect, decideAlertsAfter, writeBalanceNotifications];
}

/**
 * `emailLog`: where the development email sender (no SMTP_URL) writes the links it would have sent;
 * the server passes its logger, the CLI (which sends no email) need not.
 */
export function composeDeps(
  config: Config,
  store: Store,
  clock: Clock,
  processors: ProcessorFactory,
  secrets: SecretBox,
  emailLog: EmailLog = () => {},
): Deps {
  return {
    store,
    clock,
    processors,
    ledger: new Ledger(balanceEffects()),
    webhooks: { allowPrivate: config.webhookAllowPrivate },
    usage: { eventMaxAgeMs: config.eventMaxAgeDays * DAY_MS, retentionMs: config.usageRetentionDays * DAY_MS },
    secrets,
    identity: {
      publicUrl: config.publicUrl,
      sessionIdleMs: config.sessionIdleMinutes * 60_000,
      email: emailSender(config, emailLog),
    },
  };
}
