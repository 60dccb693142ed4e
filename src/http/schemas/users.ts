/** Users: sign-up (no credentials), and reading or updating a user as that user or as one of their companies. */
import { Type } from '@sinclair/typebox';
import { Email, Text, errorResponses, userAuth, userOrCompanyAuth } from './common.js';

const UserId = Type.Object({ user_id: Type.String({ pattern: '^[0-9]{1,15}$' }) });

export const signUpSchema = {
  tags: ['users'],
  summary: 'Sign up (no credentials needed)',
  description:
    'The password is stored only as a salted scrypt hash. firstName is the first word of name, lastName the ' +
    'rest. A duplicate email is 409. Sends a verification link (valid 7 days) to the address. Sign-ups are ' +
    'limited per client address (BILLING_SIGNUP_LIMIT_PER_MINUTE; 429 with Retry-After).',
  body: Type.Object(
    { name: Text('Full name'), email: Email, password: Type.String({ minLength: 8, maxLength: 1024 }) },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Ref('User'),
    400: Type.Ref('Error'),
    403: Type.Ref('Error'),
    409: Type.Ref('Error'),
    429: Type.Ref('Error'),
  },
};

export const getUserSchema = {
  tags: ['users'],
  summary: 'Get a user',
  description: "With the user's own credentials or those of a company the user belongs to; anyone else gets 404.",
  security: userOrCompanyAuth,
  params: UserId,
  response: { 200: Type.Ref('User'), ...errorResponses(404, 429) },
};

export const updateUserSchema = {
  tags: ['users'],
  summary: 'Update a user',
  security: userOrCompanyAuth,
  params: UserId,
  body: Type.Object({ name: Type.Optional(Text()), email: Type.Optional(Email) }, { additionalProperties: false }),
  response: { 200: Type.Object({ data: Type.Ref('User') }), ...errorResponses(404, 409, 429) },
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
