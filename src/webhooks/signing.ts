/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/): receivers verify our
 * notifications with any Standard Webhooks library, so the wire format must match it exactly.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** A 256-bit HMAC key: within the 24–64 bytes Standard Webhooks asks for, and SHA-256's full strength. */
export const WEBHOOK_SECRET_BYTES = 32;
export const WEBHOOK_USER_AGENT = 'billing-engine-webhooks/1.0';
const SIGNATURE_VERSION = 'v1';

export interface SignInput {
  /** `whsec_<base64>`; the decoded bytes are the HMAC key. */
  secret: string;
  /** The notification id; identical on every retry so receivers can deduplicate. */
  msgId: string;
  /** Unix seconds of this attempt (wall clock), so receivers can reject replays. */
  timestampSeconds: number;
  /** The exact bytes sent; signing a re-serialised copy would break verification. */
  body: string | Buffer;
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'content-type': 'application/json';
  'user-agent': string;
}

export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(WEBHOOK_SECRET_BYTES).toString('base64');
}

/** Decodes the key; refuses malformed secrets loudly because a wrong key fails silently downstream. */
export function webhookSecretKey(secret: string): Buffer {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    throw new TypeError(`webhook secret must start with ${WEBHOOK_SECRET_PREFIX}`);
  }
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  if (key.length === 0) throw new TypeError('webhook secret key is empty');
  return key;
}

export function signWebhook({ secret, msgId, timestampSeconds, body }: SignInput): string {
  if (!Number.isSafeInteger(timestampSeconds)) {
    throw new TypeError('timestampSeconds must be an integer number of seconds');
  }
  const mac = createHmac('sha256', webhookSecretKey(secret))
    .update(`${msgId}.${timestampSeconds}.`)
    .update(body)
    .digest('base64');
  return `${SIGNATURE_VERSION},${mac}`;
}

export function webhookHeaders(input: SignInput & { userAgent?: string }): WebhookHeaders {
  return {
    'webhook-id': input.msgId,
    'webhook-timestamp': String(input.timestampSeconds),
    'webhook-signature': signWebhook(input),
    'content-type': 'application/json',
    'user-agent': input.userAgent ?? WEBHOOK_USER_AGENT,
  };
}
