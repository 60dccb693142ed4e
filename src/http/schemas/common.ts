/**
 * Shared pieces of the route schemas. One TypeBox definition per route drives validation,
 * the TypeScript types of the handler and the OpenAPI document.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { DENOMINATION_PATTERN } from '../../domain/denomination.js';
import { CLIENT_EVENT_ID_LENGTH_MAX } from '../../domain/events.js';
import { METADATA_ENTRIES_MAX, METADATA_LIMITS_TEXT } from '../../domain/metadata.js';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '../../domain/limits.js';
import { ERROR_TYPES, type ErrorType } from '../errors.js';

export const Denomination = Type.String({
  pattern: DENOMINATION_PATTERN,
  description: 'Unit of a balance: 1–64 characters of A–Z a–z 0–9 _ . : - (case-sensitive)',
});

/** Longest free-text field (names, reasons, event types). */
export const TEXT_LENGTH_MAX = 256;
export const Text = (description?: string) =>
  Type.String({ minLength: 1, maxLength: TEXT_LENGTH_MAX, ...(description ? { description } : {}) });
export const Email = Type.String({
  minLength: 3,
  maxLength: 320,
  pattern: '^[^\\s@]+@[^\\s@]+$',
  description: 'E-mail address',
});
/**
 * Any JSON object the company chooses; the only place unknown fields are welcome. Its limits
 * (domain/metadata.ts) are checked by the operation, after the schema: `maxProperties` here only
 * documents the top level.
 */
export const Metadata = Type.Object(
  {},
  { additionalProperties: true, maxProperties: METADATA_ENTRIES_MAX, description: METADATA_LIMITS_TEXT },
);
/** A signed amount of units that is exact in JavaScript (|n| ≤ 2^53 − 1). */
export const SafeInteger = (opts: { minimum?: number; description?: string } = {}) =>
  Type.Integer({
    minimum: opts.minimum ?? -Number.MAX_SAFE_INTEGER,
    maximum: Number.MAX_SAFE_INTEGER,
    ...(opts.description ? { description: opts.description } : {}),
  });
export const ClientEventId = Type.String({
  minLength: 1,
  maxLength: CLIENT_EVENT_ID_LENGTH_MAX,
  description: 'Client-chosen event id, unique per company',
});
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO-8601 UTC' });

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      type: Type.Unsafe<ErrorType>({
        type: 'string',
        enum: [...ERROR_TYPES],
        description: 'The kind of error; the HTTP status follows from it',
      }),
      code: Type.String({ description: 'Reason code that reads as a sentence, e.g. event_not_pending' }),
      message: Type.String({ description: 'What went wrong, for a person' }),
      param: Type.Optional(
        Type.String({ description: 'The field at fault, spelt as in the body: `events[0].state`, `name`' }),
      ),
      details: Type.Optional(Type.Any({ description: 'Structured facts about the error, where the code has any' })),
    }),
  },
  {
    $id: 'Error',
    title: 'Error',
    description: 'The body of every error answer',
    examples: [
      {
        error: {
          type: 'invalid_request',
          code: 'no_price_for_event_type',
          message: 'events[0]: no cost_override and no price for type "api_call" (set one with PUT /v1/prices/{type})',
          param: 'events[0]',
        },
      },
    ],
  },
);

export const PageQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: PAGE_LIMIT_MAX,
        default: PAGE_LIMIT_DEFAULT,
        description: `Page size, 1–${PAGE_LIMIT_MAX}`,
      }),
    ),
    starting_after: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'Cursor: the next_cursor of the previous page' }),
    ),
  },
  { additionalProperties: false },
);

export const PageOf = <T extends TSchema>(item: T) =>
  Type.Object(
    {
      data: Type.Array(item),
      has_more: Type.Boolean(),
      next_cursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Pass as starting_after to get the next page; null on the last page',
      }),
    },
    { description: 'One page of the list; next_cursor leads to the next' },
  );

/** Error responses every authenticated route can give. */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries([400, 401, ...statuses].map((s) => [s, Type.Ref('Error')]));

/** Path parameters shared by the routes of several resources. */
export const AccountParams = Type.Object({ account_id: Type.String({ maxLength: 64 }) });
export const BalanceParams = Type.Object({ account_id: Type.String({ maxLength: 64 }), denomination: Denomination });
export const CompanyParams = Type.Object({ company_id: Type.String({ maxLength: 64 }) });
export const DataBalance = Type.Object({ data: Type.Ref('Balance') }, { description: 'The balance as it is now' });

type Security = { [scheme: string]: string[] }[];
/** A session acts as a company with the Billing-Company header, as its user on user routes. */
export const companyAuth: Security = [{ companyKey: [] }, { sessionCookie: [] }];
export const userOrCompanyAuth: Security = [{ userPassword: [] }, { companyKey: [] }, { sessionCookie: [] }];
export const userAuth: Security = [{ userPassword: [] }, { sessionCookie: [] }];

/** A field that may be null. */
export const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(t: T) =>
  Type.Union([t, Type.Null()]);

export const Instant = (what: string) =>
  Type.String({ minLength: 1, maxLength: 64, description: `RFC 3339 date-time: ${what}` });

/** A page of rows and the cursor to the next one. */
export function presentPage<R, J>(page: { rows: R[]; hasMore: boolean }, present: (r: R) => J, idOf: (r: R) => string) {
  const last = page.rows[page.rows.length - 1];
  return {
    data: page.rows.map(present),
    has_more: page.hasMore,
    next_cursor: page.hasMore && last !== undefined ? idOf(last) : null,
  };
}
