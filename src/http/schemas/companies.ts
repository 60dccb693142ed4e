/** Companies and their API keys: registration by a user, and creating, listing and revoking keys. */
import { Type } from '@sinclair/typebox';
import { CompanyParams, Text, errorResponses, userAuth, userOrCompanyAuth } from './common.js';
import { CompanySummary } from './sessions.js';

export const createCompanySchema = {
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
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      data: Type.Object({
        company_id: Type.String(),
        name: Type.String(),
        processor: Type.String(),
        api_key: Type.String(),
      }),
    }),
    ...errorResponses(403, 429),
  },
};

export const createApiKeySchema = {
  tags: ['companies'],
  summary: 'Create an API key',
  description: 'The key is shown only in this response.',
  security: userOrCompanyAuth,
  params: CompanyParams,
  response: {
    200: Type.Object({ data: Type.Object({ key_id: Type.String(), api_key: Type.String() }) }),
    ...errorResponses(404, 429),
  },
};

export const listApiKeysSchema = {
  tags: ['companies'],
  summary: 'List API keys (without secrets)',
  security: userOrCompanyAuth,
  params: CompanyParams,
  response: { 200: Type.Object({ data: Type.Array(Type.Ref('ApiKey')) }), ...errorResponses(404, 429) },
};

export const revokeApiKeySchema = {
  tags: ['companies'],
  summary: 'Revoke an API key at once',
  description: 'Other server processes stop accepting it within BILLING_API_KEY_CACHE_MS.',
  security: userOrCompanyAuth,
  params: Type.Object({ company_id: Type.String({ maxLength: 64 }), key_id: Type.String({ maxLength: 64 }) }),
  response: {
    200: Type.Object({ data: Type.Object({ key_id: Type.String(), revoked: Type.Boolean() }) }),
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
