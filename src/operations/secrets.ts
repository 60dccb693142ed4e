/**
 * The two secrets the engine stores, sealed at rest with deps.secrets (lib/secret-box.ts): a
 * company's payment-processor key and a webhook subscription's signing secret (and the stored
 * Idempotency-Key answers that show a secret: a new webhook, a new API key). Each is sealed
 * under a context naming its row, written sealed, and opened only where it is used (a charge, a
 * delivery). `resealSecrets` seals what is still plaintext (at every start: rows from before
 * encryption) or re-seals everything not under the current key (`billing secrets rotate`).
 */
import { SecretBox, SecretBoxError } from '../lib/secret-box.js';
import type { PaymentProcessor } from '../processors/types.js';
import type { ReadTx, StoredSecret, Tx } from '../store/types.js';
import type { Deps } from './deps.js';

export const processorKeyContext = (companyId: string): string => `processor_api_key:${companyId}`;
export const webhookSecretContext = (webhookId: string): string => `webhook_secret:${webhookId}`;
/** An Idempotency-Key's stored answer that carries a secret (a new webhook's, a new API key's). */
export const idempotencyAnswerContext = (scope: string, key: string): string => `idempotency:${scope}\n${key}`;

/** A company row's processor key, opened (null when it has none). */
export function openProcessorApiKey(
  deps: Pick<Deps, 'secrets'>,
  company: { companyId: string; processorApiKey: string | null },
): string | null {
  return deps.secrets.openOrNull(company.processorApiKey, processorKeyContext(company.companyId));
}

/** The company's payment processor, given its processor key opened. */
export function processorFor(
  deps: Pick<Deps, 'secrets' | 'processors'>,
  company: { companyId: string; processor: 'sandbox' | 'stripe'; processorApiKey: string | null },
): PaymentProcessor {
  return deps.processors({ processor: company.processor, processorApiKey: openProcessorApiKey(deps, company) });
}

interface SecretKind {
  name: string;
  /** Rotation only: never stored in plaintext, and too many rows to scan at every start. */
  rotationOnly?: boolean;
  context(id: string): string;
  list(tx: ReadTx, afterId: string | null, limit: number): Promise<StoredSecret[]>;
  replace(tx: Tx, id: string, from: string, to: string): Promise<boolean>;
}

const KINDS: SecretKind[] = [
  {
    name: 'processor keys',
    context: processorKeyContext,
    list: (tx, after, limit) => tx.identity.listProcessorApiKeys(after, limit),
    replace: (tx, id, from, to) => tx.identity.replaceProcessorApiKey(id, from, to),
  },
  {
    name: 'webhook secrets',
    context: webhookSecretContext,
    list: (tx, after, limit) => tx.webhooks.listWebhookSecrets(after, limit),
    replace: (tx, id, from, to) => tx.webhooks.replaceWebhookSecret(id, from, to),
  },
  {
    name: 'Idempotency-Key answers holding a secret',
    rotationOnly: true,
    context: (id) => `idempotency:${id}`, // id is `scope\nkey`: idempotencyAnswerContext(scope, key)
    list: (tx, after, limit) => tx.idempotency.listSealedIdempotencyAnswers(after, limit),
    replace: (tx, id, from, to) => tx.idempotency.replaceIdempotencyAnswer(id, from, to),
  },
];

const BATCH = 200;

export interface ResealReport {
  /** Per kind: rows looked at, and rows written (sealed or re-sealed). */
  kinds: { name: string; rows: number; written: number }[];
}

/**
 * `plaintext`: seals the rows still in plaintext, and checks that every sealed row names a key
 * the box holds (a start with the wrong BILLING_SECRET_KEY stops here, saying which key is
 * missing, instead of failing each delivery later). `all`: also re-seals every row sealed with an
 * older key, opening it first (so a key that does not open it is an error, not garbage written).
 * Batches of BATCH rows, one transaction each; a row changed meanwhile by another process is
 * left to it.
 */
export async function resealSecrets(deps: Pick<Deps, 'store' | 'secrets'>, mode: 'plaintext' | 'all') {
  const report: ResealReport = { kinds: [] };
  const known = new Set(deps.secrets.keyIds);
  for (const kind of KINDS) {
    if (kind.rotationOnly && mode !== 'all') continue;
    let after: string | null = null;
    let rows = 0;
    let written = 0;
    for (;;) {
      const batch: StoredSecret[] = await deps.store.read((tx) => kind.list(tx, after, BATCH));
      if (batch.length === 0) break;
      after = batch[batch.length - 1]!.id;
      rows += batch.length;
      const changes: { id: string; from: string; to: string }[] = [];
      for (const { id, value } of batch) {
        const keyId = SecretBox.keyIdOf(value);
        if (keyId !== undefined && !known.has(keyId)) {
          throw new SecretBoxError(
            `${kind.name}: ${id} is sealed with key ${keyId}, which is not among the configured keys ` +
              `(${[...known].join(', ')}): add that key to BILLING_SECRET_KEY (after the current one)`,
          );
        }
        if (keyId === undefined || (mode === 'all' && !deps.secrets.isCurrent(value))) {
          const context = kind.context(id);
          changes.push({ id, from: value, to: deps.secrets.seal(deps.secrets.open(value, context), context) });
        }
      }
      if (changes.length > 0) {
        written += await deps.store.write(async (tx) => {
          let n = 0;
          for (const c of changes) if (await kind.replace(tx, c.id, c.from, c.to)) n++;
          return n;
        });
      }
      if (batch.length < BATCH) break;
    }
    report.kinds.push({ name: kind.name, rows, written });
  }
  return report;
}

/** `3 processor keys, 1 webhook secrets` style, for logs and the CLI. */
export function describeReseal(report: ResealReport): string {
  return report.kinds.map((k) => `${k.written} of ${k.rows} ${k.name}`).join(', ');
}
