/**
 * Schema validation: the Ajv compilers (bodies strict, query strings coerced) and the error body
 * of a request the route's schema refused. Such a request is 400 `invalid_request`, naming the
 * field in `param`; a route may name a finer reason code per field and failed keyword (a plan
 * with no balances is `plan_needs_at_least_one_balance`), so that moving a rule from hand-written
 * checks into the schema does not change the code clients see.
 */
import { Ajv } from 'ajv';
import type { FastifyError, FastifySchemaValidationError } from 'fastify';
import type { Reason } from '../domain/reasons.js';
import { errorBody } from './errors.js';
import { ErrorResponse } from './schemas/common.js';
import { SHARED_SCHEMAS } from './schemas/resources.js';

/** The JSON Schema keywords a reason can be named for; `required` is a missing field. */
type Keyword =
  | 'required'
  | 'type'
  | 'const'
  | 'minimum'
  | 'maximum'
  | 'minLength'
  | 'maxLength'
  | 'pattern'
  | 'minItems'
  | 'maxItems';

/**
 * Reason codes of body fields, by failed keyword. Fields are named as in `param`, with `[]` for
 * any array index (`balances[].amount`). A violation not listed stays `invalid_request`.
 */
export type BodyViolationReasons = Record<string, Partial<Record<Keyword, Reason>>>;

declare module 'fastify' {
  interface FastifyContextConfig {
    bodyViolationReasons?: BodyViolationReasons;
  }
}

export function compilers() {
  // Bodies: types are never coerced ("10" is not 10) and unknown fields are never dropped.
  const strict = new Ajv({
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: true,
    allErrors: false,
    strict: false,
    validateFormats: false,
  });
  // Query strings arrive as text: there, and only there, "20" may become 20.
  const query = new Ajv({
    coerceTypes: true,
    removeAdditional: false,
    useDefaults: true,
    allErrors: false,
    strict: false,
    validateFormats: false,
  });
  for (const s of [ErrorResponse, ...SHARED_SCHEMAS]) {
    strict.addSchema(s);
    query.addSchema(s);
  }
  return { strict, query };
}

/** The field an Ajv error is about, spelt `balances[0].amount`; undefined for the whole body. */
function paramOf(v: FastifySchemaValidationError): string | undefined {
  const path = v.instancePath
    .split('/')
    .slice(1)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
    .join('')
    .replace(/^\./, '');
  const extra = (v.params as { additionalProperty?: string; missingProperty?: string }) ?? {};
  const leaf = extra.additionalProperty ?? extra.missingProperty;
  if (leaf !== undefined) return path === '' ? leaf : `${path}.${leaf}`;
  return path === '' ? undefined : path;
}

/**
 * The first error a route names a reason for. With a union (`anyOf`) Ajv reports the errors of
 * every branch in turn, so the branch matching the value's type (`minimum` of the integer branch
 * for -1) is found even when the first error is another branch's `type`. A branch the value's
 * type does not fit says nothing more: Ajv still reports its `const`, which is no reason to
 * answer `"billing_period": 1` with anything but `invalid_request`.
 */
function namedViolation(errors: FastifySchemaValidationError[], reasons: BodyViolationReasons) {
  const branchOf = (v: FastifySchemaValidationError) => v.schemaPath.slice(0, v.schemaPath.lastIndexOf('/'));
  const wrongType = new Set(errors.filter((v) => v.keyword === 'type').map(branchOf));
  for (const v of errors) {
    if (wrongType.has(branchOf(v))) continue;
    const param = paramOf(v);
    const reason = param === undefined ? undefined : reasons[param.replace(/\[\d+\]/g, '[]')]?.[v.keyword as Keyword];
    if (reason !== undefined) return { v, param, reason };
  }
  return undefined;
}

function messageOf(context: string | undefined, v: FastifySchemaValidationError | undefined): string {
  return `${context ?? 'request'}${v?.instancePath ?? ''} ${v?.message ?? 'is invalid'}`.trim();
}

/** The error body of a request its route's schema refused. */
export function validationErrorBody(err: FastifyError, reasons: BodyViolationReasons | undefined) {
  const errors = err.validation ?? [];
  const named = reasons && err.validationContext === 'body' ? namedViolation(errors, reasons) : undefined;
  if (named) return errorBody(named.reason, messageOf(err.validationContext, named.v), named.param);
  const first = errors[0];
  return errorBody('invalid_request', messageOf(err.validationContext, first), first && paramOf(first));
}
