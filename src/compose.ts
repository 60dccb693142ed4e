/**
 * The operations' dependencies, composed once per process from the configuration: the store, the
 * clock, the payment processors, the ledger with the balance effects of a server (what follows a
 * balance change), the webhook, usage and identity settings (the email sender), and the box of
 * the secrets at rest (its keys from secret-keys.ts). The server (server.ts) and the CLI use it.
 */
import type { Config } from './config.js';
import { type EmailLog, emailSender } from './email/index.js';
import type { Clock } from './lib/clock.js';
import type { SecretBox } from './lib/secret-box.js';
import { DAY_MS } from './domain/time.js';
import type { Deps } from './operations/deps.js';
import { balanceEffects } from './operations/effects.js';
import { Ledger } from './operations/ledger.js';
import type { ProcessorFactory } from './processors/types.js';
import type { Store } from './store/types.js';

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
    // The SQLite writer thread builds its ledger from the same balanceEffects().
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
