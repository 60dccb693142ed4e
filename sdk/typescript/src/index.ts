/**
 * @billing-engine/client: the TypeScript client of the billing engine's API, typed from the server's own
 * OpenAPI document. `Billing` for a company's code (API key); `BillingPortal` for the customer portal's API (a
 * portal session's token, in the customer's browser or a backend-for-frontend); `createApiClient` for the typed
 * client underneath (the web console's, with its session); `verifyWebhook` for a receiver that has only the
 * webhook's secret.
 *
 * @packageDocumentation
 */
export { Billing, type BillingOptions, type CheckResult } from './billing.js';
export { type ApiClient, type ApiClientOptions, createApiClient } from './client.js';
export type { RequestOptions } from './core.js';
export { BillingError, type BillingErrorInit, type BillingErrorType } from './errors.js';
export {
  LEASE_BATCH_MAX,
  LEASE_EXPIRY_MARGIN_MS,
  LEASE_FLUSH_INTERVAL_MS,
  LEASE_RETRY_MAX_MS,
  Lease,
  type LeaseFailure,
  type LeaseOptions,
  type LeaseRecord,
} from './lease.js';
export { LeasePool, type LeasePoolOptions, LeaseTake } from './lease-pool.js';
export { type Page, type PageLoader, PagePromise, paginate } from './pagination.js';
export {
  BillingPortal,
  type BillingPortalOptions,
  type BillingPortalUrlOptions,
  type PortalAccount,
  type PortalChargeListParams,
  type PortalGrantListParams,
  type PortalTopup,
  type PortalTransactionListParams,
  type PortalUsageParams,
} from './portal.js';
export {
  type Account,
  type AccountCreateParams,
  type AccountListParams,
  type AccountUpdateParams,
  Accounts,
} from './resources/accounts.js';
export {
  type Alert,
  type AlertCreateParams,
  type AlertDeleted,
  type AlertListParams,
  Alerts,
  type TriggeredAlertListParams,
} from './resources/alerts.js';
export {
  type AutoRefillParams,
  type BalanceLimitsParams,
  type Balance,
  type BalanceAdjustParams,
  type BalanceCreateParams,
  Balances,
} from './resources/balances.js';
export { type Charge, type ChargeListParams, Charges, type Receipt } from './resources/charges.js';
export {
  type Entitlement,
  type EntitlementCheck,
  type EntitlementCheckParams,
  Entitlements,
  type FeatureOverrideParams,
} from './resources/entitlements.js';
export {
  type BillingEvent,
  type EventInput,
  type EventListParams,
  type EventSettleParams,
  Events,
  type IngestOptions,
  type IngestResult,
} from './resources/events.js';
export {
  type Feature,
  type FeatureDeleted,
  type FeatureListParams,
  Features,
  type FeatureSetParams,
} from './resources/features.js';
export {
  type BalanceGrantListParams,
  type Grant,
  type GrantCreateParams,
  type GrantListParams,
  Grants,
  type GrantUpdateParams,
  type GrantVoidParams,
} from './resources/grants.js';
export { type LeaseCreateParams, type LeaseListParams, type LeaseOpenParams, Leases } from './resources/leases.js';
export {
  type CreatedPortalSession,
  type PortalSession,
  type PortalSessionCreateParams,
  PortalSessions,
} from './resources/portal-sessions.js';
export {
  type Price,
  type PriceListParams,
  type PriceSetParams,
  type PriceVersion,
  type PriceVersionListParams,
  Prices,
} from './resources/prices.js';
export { type TopupOffer, type TopupOfferPutParams, TopupOffers } from './resources/topup-offers.js';
export { type Transaction, type TransactionListParams, Transactions } from './resources/transactions.js';
export { Usage, type UsageGroup, type UsageQueryParams } from './resources/usage.js';
export {
  type CreatedWebhook,
  type WebhookCreateParams,
  type WebhookDeleted,
  type WebhookListParams,
  type WebhookSubscription,
  Webhooks,
} from './resources/webhooks.js';
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
  type AlertWebhookPayload,
  type BalanceWebhookPayload,
  type EntitlementsWebhookPayload,
  isAlertWebhook,
  isEntitlementsWebhook,
  type WebhookHeaders,
  type WebhookPayload,
  type WebhookType,
  WebhookVerificationError,
  verifyWebhook,
} from './webhooks.js';
