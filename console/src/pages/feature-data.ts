/**
 * What the Features page, the plan editor and the account page's Features tab share: the company's features and
 * plans, loaded whole (a company has at most 500 features), the kinds in words, and config values as JSON text.
 */
import { type Feature, type Plan, allPages, api, ok } from '../api';

export const FEATURE_KEY = /^[A-Za-z0-9_.:-]{1,64}$/;
export const KEY_RULE = 'Letters, digits and _ . : - (1–64).';

export const KINDS: { value: Feature['kind']; label: string }[] = [
  { value: 'boolean', label: 'Boolean: on or off' },
  { value: 'config', label: 'Config: a JSON value' },
  { value: 'metered', label: 'Metered: usage of an event type' },
];

/** Every feature of the company, by key. */
export const loadFeatures = (): Promise<Feature[]> =>
  allPages<Feature>((c) =>
    ok(api.GET('/v1/features', { params: { query: { limit: 100, ...(c ? { starting_after: c } : {}) } } })),
  );

/** Every plan of the company, newest first. */
export const loadPlans = (companyId: string): Promise<Plan[]> =>
  allPages<Plan>((c) =>
    ok(
      api.GET('/v1/companies/{company_id}/plans', {
        params: { path: { company_id: companyId }, query: { limit: 100, ...(c ? { starting_after: c } : {}) } },
      }),
    ),
  );

/** A config value as the person typed it and reads it: JSON; nothing for none. */
export const jsonText = (value: unknown): string =>
  value === null || value === undefined ? '' : JSON.stringify(value);

/** JSON text typed in a field: its value, or why it is not JSON. Empty: no value. */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, message: 'Not valid JSON: e.g. 5, "pro", true or {"max_seats": 5}.' };
  }
}

/** "balances/0/amount", "features[0].value" and "/features/0/value" name the same field: "features.0.value". */
export const normalizeParam = (param: string | undefined): string =>
  (param ?? '')
    .replace(/^\//, '')
    .replace(/[/[\]]+/g, '.')
    .replace(/\.{2,}/g, '.')
    .replace(/\.$/, '');
