/**
 * Requests from /openapi.json: a fast-check arbitrary of values valid for a route's JSON Schema (the subset
 * TypeBox emits: object, array, string with length/pattern/enum, integer, number, boolean, null, anyOf), and
 * the operations of the document with their path parameters.
 */
import fc from 'fast-check';

type Schema = Record<string, any>;

const MAX_ITEMS = 3;
const MAX_STRING = 40;

export function arbitraryOf(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (schema === undefined || depth > 6) return fc.constant({});
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((s: Schema) => arbitraryOf(s, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const props: Record<string, Schema> = schema.properties ?? {};
      const required: string[] = schema.required ?? [];
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries(props)) model[k] = arbitraryOf(s, depth + 1);
      const record = fc.record(model, { requiredKeys: required.filter((k) => k in props) });
      return record;
    }
    case 'array': {
      const min = schema.minItems ?? 0;
      const max = Math.max(min, Math.min(schema.maxItems ?? MAX_ITEMS, MAX_ITEMS));
      return fc.array(arbitraryOf(schema.items, depth + 1), { minLength: min, maxLength: max });
    }
    case 'string': {
      const min = schema.minLength ?? 0;
      const max = Math.max(min, Math.min(schema.maxLength ?? MAX_STRING, MAX_STRING));
      if (typeof schema.pattern === 'string') {
        const re = new RegExp(schema.pattern);
        return fc
          .stringMatching(re)
          .filter((s) => s.length >= min && s.length <= (schema.maxLength ?? Number.MAX_SAFE_INTEGER));
      }
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      return fc.string({ minLength: min, maxLength: max });
    }
    case 'integer':
      return fc.integer({
        min: Math.max(schema.minimum ?? -1_000_000, Number.MIN_SAFE_INTEGER),
        max: Math.min(schema.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER),
      });
    case 'number':
      return fc.double({
        min: schema.minimum ?? -1_000_000,
        max: schema.maximum ?? 1_000_000,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.constant({});
  }
}

/** One valid value of `schema`, the same for the same seed. */
export function sampleOf(schema: Schema | undefined, seedValue: number): unknown {
  return fc.sample(arbitraryOf(schema), { seed: seedValue, numRuns: 1 })[0];
}

export interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  queryParams: string[];
  body: Schema | undefined;
  security: string[];
}

export function operationsOf(doc: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(ops)) {
      const params: any[] = op.parameters ?? [];
      out.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
        body: op.requestBody?.content?.['application/json']?.schema,
        security: (op.security ?? []).flatMap((s: Record<string, unknown>) => Object.keys(s)),
      });
    }
  return out;
}

/** `path` with each {name} replaced by `values[name]` (URI-encoded). */
export function fill(path: string, values: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? `missing_${name}`));
}
