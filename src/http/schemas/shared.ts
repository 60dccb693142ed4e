/**
 * The records several routes refer to by `$ref` (components of the OpenAPI document, in this order),
 * each defined with its aggregate's schemas.
 */
import { Account } from './accounts.js';
import { Balance } from './balances.js';
import { Event } from './events.js';
import { Lease } from './leases.js';
import { Grant } from './grants.js';
import { Alert } from './alerts.js';
import { Feature } from './features.js';
import { ApiKey, User } from './identity.js';
import { Transaction } from './transactions.js';
import { Price, PriceVersion } from './prices.js';

export const SHARED_SCHEMAS = [
  Balance,
  Account,
  Event,
  Lease,
  Transaction,
  Price,
  PriceVersion,
  Grant,
  Alert,
  Feature,
  User,
  ApiKey,
];
