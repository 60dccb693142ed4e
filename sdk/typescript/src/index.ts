/**
 * @billing-engine/client: the TypeScript client of the billing engine's API, typed from the server's own
 * OpenAPI document. `Billing` for a company's code (API key); `createApiClient` for the typed client underneath
 * (the web console's, with its session); `verifyWebhook` for a receiver that has only the webhook's secret.
 *
 * @packageDocumentation
 */
export {
  type Account,
  type AccountCreateParams,
  type AccountListParams,
  type AccountUpdateParams,
  Accounts,
  type AutoRefillParams,
  type Balance,
  type BalanceAdjustParams,
  type BalanceGrantListParams,
  type BalanceCreateParams,
  Balances,
  Billing,
  type BillingEvent,
  type BillingOptions,
  type CheckResult,
  type CreatedWebhook,
  type EventInput,
  type EventListParams,
  type EventSettleParams,
  Events,
  type Grant,
  type GrantCreateParams,
  type GrantListParams,
  Grants,
  type GrantUpdateParams,
  type GrantVoidParams,
  type IngestOptions,
  type IngestResult,
  type Price,
  type PriceListParams,
  type PriceVersion,
  type PriceVersionListParams,
  type PriceSetParams,
  Prices,
  type RequestOptions,
  type Transaction,
  type TransactionListParams,
  Transactions,
  Usage,
  type UsageGroup,
  type UsageQueryParams,
  type WebhookCreateParams,
  type WebhookDeleted,
  type WebhookListParams,
  type WebhookSubscription,
  Webhooks,
} from './billing.js';
export { type ApiClient, type ApiClientOptions, createApiClient } from './client.js';
export { BillingError, type BillingErrorInit, type BillingErrorType } from './errors.js';
export { type Page, type PageLoader, PagePromise, paginate } from './pagination.js';
export type { components, operations, paths } from './schema.js';
export {
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type FetchLike,
  type TransportOptions,
  newIdempotencyKey,
  resilientFetch,
} from './transport.js';
export {
  type WebhookHeaders,
  type WebhookPayload,
  type WebhookType,
  WebhookVerificationError,
  verifyWebhook,
} from './webhooks.js';
