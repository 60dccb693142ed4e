/** Users: sign-up (no credentials), and reading or updating a user as that user or as one of their companies. */
import { Type } from '@sinclair/typebox';
import { Email, Text, errorResponses, userOrCompanyAuth } from './common.js';

const UserId = Type.Object({ user_id: Type.String({ pattern: '^[0-9]{1,15}$' }) });

export const signUpSchema = {
  operationId: 'createUser',
  tags: ['users'],
  summary: 'Sign up (no credentials needed)',
  description:
    'The password is stored only as a salted scrypt hash. firstName is the first word of name, lastName the ' +
    'rest. A duplicate email is 409.',
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
  security: userOrCompanyAuth,
  params: UserId,
  body: Type.Object({ name: Type.Optional(Text()), email: Type.Optional(Email) }, { additionalProperties: false }),
  response: {
    200: Type.Object({ data: Type.Ref('User') }, { description: 'The user as it is now' }),
    ...errorResponses(404, 409, 429),
  },
};
