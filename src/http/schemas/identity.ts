/** Identity and keys: users (sign-up, the emailed links), companies and their API keys; records and presenters. */
import { Type } from '@sinclair/typebox';
import { CompanyParams, Email, errorResponses, Text, Timestamp, userAuth, userOrCompanyAuth } from './common.js';
import { CompanySummary } from './sessions.js';
import { toIso } from '../../lib/clock.js';
import type { ApiKeyRow, UserRow } from '../../store/types.js';
import { splitName } from '../../operations/identity.js';

const UserId = Type.Object({ user_id: Type.String({ pattern: '^[0-9]{1,15}$' }) });

export const signUpSchema = {
  operationId: 'createUser',
  tags: ['users'],
  summary: 'Sign up (no credentials needed)',
  description:
    'The password is stored only as a salted scrypt hash. firstName is the first word of name, lastName the ' +
    'rest. A duplicate email is 409. Sends a verification link (valid 7 days) to the address. Sign-ups are ' +
    'limited per client address (BILLING_SIGNUP_LIMIT_PER_MINUTE; 429 with Retry-After).',
  body: Type.Object(
    { name: Text('Full name'), email: Email, password: Type.String({ minLength: 8, maxLength: 1024 }) },
    {
      additionalProperties: false,
      examples: [{ name: 'Ada Lovelace', email: 'ada@example.com', password: 'correct horse battery' }],
    },
  ),
  response: {
    200: Type.Ref('User', { description: 'The new user (createDate, no signUpDate)' }),
    400: Type.Ref('Error'),
    403: Type.Ref('Error'),
    409: Type.Ref('Error'),
    429: Type.Ref('Error'),
  },
};

export const getUserSchema = {
  operationId: 'getUser',
  tags: ['users'],
  summary: 'Get a user',
  description: "With the user's own credentials or those of a company the user belongs to; anyone else gets 404.",
  security: userOrCompanyAuth,
  params: UserId,
  response: { 200: Type.Ref('User', { description: 'The user (signUpDate)' }), ...errorResponses(404, 429) },
};

export const updateUserSchema = {
  operationId: 'updateUser',
  tags: ['users'],
  summary: 'Update a user',
  description:
    'Fields left out keep their values; firstName and lastName follow from name as at sign-up (name is trimmed). ' +
    'The email is stored trimmed and lower-cased; one that another user has is 409 email_already_registered. ' +
    "With the user's own credentials (or session) or those of a company the user belongs to; anyone else gets " +
    '404.',
  security: userOrCompanyAuth,
  params: UserId,
  body: Type.Object({ name: Type.Optional(Text()), email: Type.Optional(Email) }, { additionalProperties: false }),
  response: {
    200: Type.Object({ data: Type.Ref('User') }, { description: 'The user as it is now' }),
    ...errorResponses(404, 409, 429),
  },
};

const Sent = Type.Object({
  data: Type.Object({ sent: Type.Boolean({ description: 'false only when there was nothing to send' }) }),
});

const Token = Type.String({ minLength: 1, maxLength: 256, description: 'The token of the emailed link' });

export const resendVerificationSchema = {
  operationId: 'resendEmailVerification',
  tags: ['users'],
  summary: 'Send the email verification link again (user credentials or session)',
  description:
    'A new link, valid 7 days; earlier links stay valid until they expire. An address already verified gets ' +
    'nothing: {sent: false}. Another user: 404.',
  security: userAuth,
  params: UserId,
  response: { 202: Sent, ...errorResponses(404, 429) },
};

export const verifyEmailSchema = {
  operationId: 'verifyEmail',
  tags: ['users'],
  summary: 'Verify an email address with the emailed token (no credentials needed)',
  description: 'Sets emailVerified. An unknown, expired or already used token is 400 naming token.',
  body: Type.Object({ token: Token }, { additionalProperties: false }),
  response: { 200: Type.Object({ data: Type.Ref('User') }), 400: Type.Ref('Error'), 429: Type.Ref('Error') },
};

export const requestPasswordResetSchema = {
  operationId: 'requestPasswordReset',
  tags: ['users'],
  summary: 'Email a password-reset link (no credentials needed)',
  description:
    'Answers 202 whether or not a user has this email (nothing tells which); when one does, it gets a link ' +
    'valid 1 hour. Limited per client address and per email (429 with Retry-After).',
  body: Type.Object({ email: Email }, { additionalProperties: false }),
  response: { 202: Sent, 400: Type.Ref('Error'), 429: Type.Ref('Error') },
};

export const completePasswordResetSchema = {
  operationId: 'completePasswordReset',
  tags: ['users'],
  summary: 'Set a new password with the emailed token (no credentials needed)',
  description:
    'The token works once, within 1 hour; otherwise 400 naming token. A password under 8 characters is 400 ' +
    "naming password (the token stays usable). Ends all the user's sessions and marks the email verified.",
  body: Type.Object({ token: Token, password: Type.String({ maxLength: 1024 }) }, { additionalProperties: false }),
  response: { 200: Type.Object({ data: Type.Ref('User') }), 400: Type.Ref('Error'), 429: Type.Ref('Error') },
};

export const createCompanySchema = {
  operationId: 'createCompany',
  tags: ['companies'],
  summary: 'Register a company (user credentials)',
  description:
    'The new company is owned by the calling user. The api_key is shown only here; it is stored only as a ' +
    'SHA-256 digest.',
  security: userAuth,
  body: Type.Object(
    {
      name: Text('Company name'),
      processor: Type.Optional(Type.Union([Type.Literal('sandbox'), Type.Literal('stripe')], { default: 'sandbox' })),
      processor_api_key: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 512,
          description:
            'Required for stripe: a restricted key with write access to customers, payment intents and ' +
            'payment methods',
        }),
      ),
    },
    { additionalProperties: false, examples: [{ name: 'Acme' }] },
  ),
  response: {
    200: Type.Object(
      {
        data: Type.Object({
          company_id: Type.String(),
          name: Type.String(),
          processor: Type.String(),
          api_key: Type.String(),
        }),
      },
      { description: 'The new company and its first API key (shown this once)' },
    ),
    ...errorResponses(403, 429),
  },
};

export const createApiKeySchema = {
  operationId: 'createApiKey',
  tags: ['companies'],
  summary: 'Create an API key',
  description: 'The key is shown only in this response.',
  security: userOrCompanyAuth,
  params: CompanyParams,
  response: {
    200: Type.Object(
      { data: Type.Object({ key_id: Type.String(), api_key: Type.String() }) },
      { description: 'The new key: api_key is shown this once' },
    ),
    ...errorResponses(404, 429),
  },
};

export const listApiKeysSchema = {
  operationId: 'listApiKeys',
  tags: ['companies'],
  summary: 'List API keys (without secrets)',
  description:
    'Every key of the company, revoked ones too (with revoked_at), oldest first, in one answer (not paged). ' +
    'Only the prefix of each key is shown: its secret was shown once, when it was created. last_used_at is ' +
    'written at most once a minute per key and server process, so it may lag by up to a minute. With the ' +
    "company's credentials or an owning user's; any other company is 404.",
  security: userOrCompanyAuth,
  params: CompanyParams,
  response: {
    200: Type.Object(
      { data: Type.Array(Type.Ref('ApiKey')) },
      { description: 'Every key of the company, revoked too' },
    ),
    ...errorResponses(404, 429),
  },
};

export const revokeApiKeySchema = {
  operationId: 'revokeApiKey',
  tags: ['companies'],
  summary: 'Revoke an API key at once',
  description: 'Other server processes stop accepting it within BILLING_API_KEY_CACHE_MS.',
  security: userOrCompanyAuth,
  params: Type.Object({ company_id: Type.String({ maxLength: 64 }), key_id: Type.String({ maxLength: 64 }) }),
  response: {
    200: Type.Object(
      { data: Type.Object({ key_id: Type.String(), revoked: Type.Boolean() }) },
      { description: 'The key is revoked: it authenticates nothing from now on' },
    ),
    ...errorResponses(404, 429),
  },
};

export const listCompaniesSchema = {
  operationId: 'listCompanies',
  tags: ['companies'],
  summary: 'The companies the user owns (user credentials or session)',
  description: 'Oldest first; all of them (a user owns few companies).',
  security: userAuth,
  response: { 200: Type.Object({ data: Type.Array(CompanySummary) }), ...errorResponses(429) },
};

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

export function presentUser(u: UserRow, dateField: 'createDate' | 'signUpDate') {
  const { firstName, lastName } = splitName(u.name);
  return {
    id: u.id,
    firstName,
    lastName,
    email: u.email,
    dateOfBirth: u.dateOfBirth,
    emailVerified: u.emailVerified,
    [dateField]: toIso(u.createdAtMs).slice(0, 10),
  };
}

export function presentApiKey(k: ApiKeyRow) {
  return {
    key_id: k.keyId,
    prefix: k.prefix,
    created_at: toIso(k.createdAtMs),
    revoked_at: k.revokedAtMs === null ? null : toIso(k.revokedAtMs),
    last_used_at: k.lastUsedAtMs === null ? null : toIso(k.lastUsedAtMs),
  };
}
