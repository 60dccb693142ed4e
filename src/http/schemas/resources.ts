/** The records the API returns, as schemas (they also shape the serialised JSON). */
import { Type, type Static } from '@sinclair/typebox';
import { SafeInteger, Timestamp } from './common.js';

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(t: T) =>
  Type.Union([t, Type.Null()]);

export const Balance = Type.Object(
  {
    account_id: Type.String(),
    denomination: Type.String(),
    amount: Type.Integer({ description: "Posted amount; equals the sum of the balance's transactions" }),
    pending: Type.Integer({ description: 'Held by events in state pending' }),
    available: Type.Integer({ description: 'amount − pending' }),
    refill_threshold: Nullable(Type.Integer()),
    refill_amount: Nullable(Type.Integer()),
    refill_usd_amount: Nullable(Type.Integer({ description: 'USD cents' })),
    refill_on_day: Nullable(Type.String({ description: 'Day of month of the monthly refill, e.g. "15" or "1"' })),
    // --- money movement
    refill_monthly: Type.Boolean({ description: 'Monthly refill switched on' }),
    next_refill_at: Type.Union([Timestamp, Type.Null()], { description: 'When the next monthly refill is due' }),
    auto_refill_paused: Type.Boolean({
      description: 'Auto-refill stopped after 3 declined charges in a row, until a new card is attached',
    }),
    consecutive_declines: Type.Integer({ description: 'Declined refill charges in a row' }),
  },
  {
    $id: 'Balance',
    title: 'Balance',
    examples: [
      {
        account_id: 'a_3kTQ9x0bM2',
        denomination: 'tokens',
        amount: 1000,
        pending: 25,
        available: 975,
        refill_threshold: 100,
        refill_amount: 1000,
        refill_usd_amount: 1000,
        refill_on_day: null,
        refill_monthly: false,
        next_refill_at: null,
        auto_refill_paused: false,
        consecutive_declines: 0,
      },
    ],
  },
);
export type BalanceJson = Static<typeof Balance>;

export const Account = Type.Object(
  {
    account_id: Type.String({ description: 'a_…' }),
    name: Nullable(Type.String()),
    email: Nullable(Type.String()),
    metadata: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    processor_id: Nullable(Type.String()),
    plan_id: Nullable(Type.String()),
    created_at: Timestamp,
    balances: Type.Array(Type.Ref('Balance')),
  },
  {
    $id: 'Account',
    title: 'Account',
    examples: [
      {
        account_id: 'a_3kTQ9x0bM2',
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        metadata: { crm_id: 'crm-42' },
        processor_id: null,
        plan_id: null,
        created_at: '2026-11-23T10:00:00.000Z',
        balances: [],
      },
    ],
  },
);

export const Cost = Type.Object({ amount: Type.Integer(), denomination: Type.String() });

export const Event = Type.Object(
  {
    event_id: Type.String({ description: 'The client id where one was given, else ev_…' }),
    account_id: Type.String(),
    type: Type.String(),
    quantity: Type.Number(),
    cost: Cost,
    metadata: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    state: Type.Union([Type.Literal('pending'), Type.Literal('complete'), Type.Literal('cancelled')]),
    timestamp: Type.String({
      format: 'date-time',
      description: "When the usage happened: the request's timestamp, else when the event was recorded",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    expires_at: Type.Optional(
      Type.String({ format: 'date-time', description: 'While pending: when the hold is cancelled automatically' }),
    ),
  },
  {
    $id: 'Event',
    title: 'Event',
    examples: [
      {
        event_id: 'req-7f3a',
        account_id: 'a_3kTQ9x0bM2',
        type: 'api_call',
        quantity: 1,
        cost: { amount: 25, denomination: 'tokens' },
        metadata: null,
        state: 'pending',
        timestamp: '2026-11-23T10:00:00.000Z',
        created_at: '2026-11-23T10:00:00.000Z',
        updated_at: '2026-11-23T10:00:00.000Z',
        expires_at: '2026-11-23T11:00:00.000Z',
      },
    ],
  },
);

export const Transaction = Type.Object(
  {
    transaction_id: Type.String({ description: 'tx_…' }),
    account_id: Type.String(),
    denomination: Type.String(),
    amount: SafeInteger({ description: 'Signed change of the balance amount' }),
    balance_after: Type.Integer(),
    kind: Type.Union(
      ['usage', 'grant', 'refill', 'adjustment', 'proration', 'period_reset'].map((k) => Type.Literal(k)),
    ),
    event_id: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String()),
    created_at: Timestamp,
  },
  {
    $id: 'Transaction',
    title: 'Transaction',
    examples: [
      {
        transaction_id: 'tx_9sLq2M4n',
        account_id: 'a_3kTQ9x0bM2',
        denomination: 'tokens',
        amount: -25,
        balance_after: 975,
        kind: 'usage',
        event_id: 'req-7f3a',
        created_at: '2026-11-23T10:00:00.000Z',
      },
    ],
  },
);

export const Price = Type.Object(
  {
    type: Type.String(),
    denomination: Type.String(),
    unit_amount: Type.String({ description: 'Exact decimal: units per unit of quantity' }),
    updated_at: Timestamp,
  },
  { $id: 'Price', title: 'Price' },
);

export const User = Type.Object(
  {
    id: Type.Integer(),
    firstName: Type.String(),
    lastName: Type.String(),
    email: Type.String(),
    dateOfBirth: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
    emailVerified: Type.Boolean(),
    createDate: Type.Optional(Type.String({ format: 'date' })),
    signUpDate: Type.Optional(Type.String({ format: 'date' })),
  },
  { $id: 'User', title: 'User' },
);

export const ApiKey = Type.Object(
  {
    key_id: Type.String(),
    prefix: Type.String({ description: 'First characters of the key, to tell keys apart' }),
    created_at: Timestamp,
    revoked_at: Type.Union([Timestamp, Type.Null()]),
    last_used_at: Type.Union([Timestamp, Type.Null()], {
      description:
        'When a request last authenticated with the key, to within a minute (it is recorded at most once a ' +
        'minute per key and server); null: never used since it was created or since this field was added',
    }),
  },
  { $id: 'ApiKey', title: 'ApiKey' },
);

export const SHARED_SCHEMAS = [Balance, Account, Event, Transaction, Price, User, ApiKey];
