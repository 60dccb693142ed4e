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
import { SHARED_SCHEMAS } from './schemas/shared.js';

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

/** Route config of a body that may be a bare array: how errors name it, and the forms it accepts. */
export interface BodyForms {
  /** The name of a bare-array body in `param` and messages: `events[0].state`, as the domain spells it. */
  arrayParam: string;
  /** The accepted forms, in words, for a body of none of them. */
  forms: string;
  /** What a single item sent where the array is expected looks like: it gets its own hint. */
  isSingleItem?: (body: unknown) => boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    bodyForms?: BodyForms;
  }
}

type Violation = FastifySchemaValidationError;

/** What the request got wrong: one Ajv error, and for a union of constants the values it allows. */
interface Explained {
  v: Violation;
  /** A union of constants (an enum): every value allowed, e.g. ["pending","complete"]. */
  allowed?: unknown[];
  /** A union none of whose branches takes the value's type: the types it takes. */
  types?: string[];
}

/**
 * The error that explains a refusal. Ajv reports a union (`anyOf`) as the errors of every branch
 * followed by the union's own "must match a schema in anyOf": the first branch's error is seldom
 * the useful one (`{events:[…]}` is not "body must be array"). A union of constants is explained
 * by its allowed values; any other union by the branch whose type fits the value, recursively;
 * a value that fits no branch by the types the union takes.
 */
export function explain(errors: Violation[]): Explained | undefined {
  let list = errors;
  for (;;) {
    const first = list[0];
    if (!first) return undefined;
    // The outermost union around the first error: the inner ones are explained within its branch.
    const union = list
      .filter((u) => u.keyword === 'anyOf' && first.schemaPath.startsWith(`${u.schemaPath}/`))
      .sort((a, b) => a.schemaPath.length - b.schemaPath.length)[0];
    if (!union) return { v: first };
    const members = list.filter((e) => e !== union && e.schemaPath.startsWith(`${union.schemaPath}/`));
    const atUnion = members.filter((e) => e.instancePath === union.instancePath);
    const constants = atUnion.filter((e) => e.keyword === 'const' || e.keyword === 'enum');
    if (constants.length > 0 && atUnion.length === members.length && atUnion.every((e) => isLeaf(e))) {
      const allowed = constants.flatMap((e) => {
        const p = e.params as { allowedValue?: unknown; allowedValues?: unknown[] };
        return e.keyword === 'const' ? [p.allowedValue] : (p.allowedValues ?? []);
      });
      if (atUnion.some((e) => e.keyword === 'type' && (e.params as { type?: string }).type === 'null'))
        allowed.push(null);
      return { v: union, allowed };
    }
    const branchOf = (e: Violation) => e.schemaPath.slice(union.schemaPath.length + 1).split('/')[0];
    const wrongType = new Set(atUnion.filter((e) => e.keyword === 'type').map(branchOf));
    const fitting = members.find((e) => !wrongType.has(branchOf(e)));
    if (!fitting) {
      const types = atUnion
        .filter((e) => e.keyword === 'type')
        .map((e) => String((e.params as { type?: string }).type));
      return { v: union, types: [...new Set(types)] };
    }
    list = members.filter((e) => branchOf(e) === branchOf(fitting));
  }
}

const isLeaf = (e: Violation) => e.keyword === 'const' || e.keyword === 'enum' || e.keyword === 'type';

function describe(e: Explained): string {
  if (e.allowed) return `must be one of: ${e.allowed.map((a) => JSON.stringify(a)).join(', ')}`;
  if (e.types) return `must be ${e.types.map((t) => (t === 'array' || t === 'object' ? `an ${t}` : t)).join(' or ')}`;
  if (e.v.keyword === 'enum') {
    const values = (e.v.params as { allowedValues?: unknown[] }).allowedValues ?? [];
    return `must be one of: ${values.map((a) => JSON.stringify(a)).join(', ')}`;
  }
  if (e.v.keyword === 'required') return 'is required';
  if (e.v.keyword === 'additionalProperties') return 'is not a known field (unknown fields are refused)';
  if (e.v.keyword === 'const')
    return `must be ${JSON.stringify((e.v.params as { allowedValue?: unknown }).allowedValue)}`;
  return e.v.message ?? 'is invalid';
}

/** The field in `param` and messages: a bare-array body gets its name (`[0].state` → `events[0].state`). */
function nameOf(param: string | undefined, forms: BodyForms | undefined): string | undefined {
  if (forms && param?.startsWith('[')) return `${forms.arrayParam}${param}`;
  return param;
}

/** The error body of a request its route's schema refused. */
export function validationErrorBody(
  err: FastifyError,
  reasons: BodyViolationReasons | undefined,
  forms?: BodyForms,
  body?: unknown,
) {
  const errors = err.validation ?? [];
  const context = err.validationContext ?? 'request';
  const isBody = err.validationContext === 'body';
  const named = reasons && isBody ? namedViolation(errors, reasons) : undefined;
  const found = explain(errors);
  // A named reason keeps its own error; the allowed values of its union still say what would do.
  const explained =
    named && !(found?.allowed && found.v.instancePath === named.v.instancePath) ? { v: named.v } : found;
  if (!explained) return errorBody('invalid_request', `${context} is invalid`);
  let param = named?.param ?? nameOf(paramOf(explained.v), isBody ? forms : undefined);
  if (isBody && forms && param === undefined && Array.isArray(body)) param = forms.arrayParam;
  let message = `${isBody ? (param ?? 'body') : param ? `${context} ${param}` : context} ${describe(explained)}`;
  // A body of none of the accepted shapes: say which shapes it may have.
  if (isBody && forms && explained.v.instancePath === '' && !Array.isArray(body)) {
    const wrap = `[ … ] or {"${forms.arrayParam}": [ … ]}`;
    if (forms.isSingleItem?.(body)) message = `body must be ${forms.forms}; this is a single item: send it as ${wrap}`;
    else message = `body must be ${forms.forms}${explained.types ? '' : `; ${message}`}`;
  }
  return errorBody(named?.reason ?? 'invalid_request', message, param);
}
