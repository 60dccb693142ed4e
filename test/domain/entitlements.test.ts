// Guarantees (domain/entitlements.ts): an override in force decides (enabled grants with its own value or the
// plan's, disabled takes away), and ends exactly at its expires_at; without one the plan decides; without either
// there is no access; only config features carry a value; a feature's rule and a value name the field that makes
// them invalid.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  CONFIG_VALUE_MAX_BYTES,
  entitlementOf,
  type FeatureOverride,
  type FeatureRule,
  featureRuleOf,
  featureValueOf,
  type PlanFeature,
} from '../../src/domain/entitlements.js';

const T = Date.UTC(2027, 2, 3, 4, 5);
const sso: FeatureRule = { key: 'sso', kind: 'boolean', eventType: null };
const seats: FeatureRule = { key: 'seats', kind: 'config', eventType: null };

test('the plan decides without an override; an override decides until its expires_at, exactly', () => {
  const plan: PlanFeature = { feature: 'seats', value: { max: 5 } };
  assert.deepEqual(entitlementOf(seats, plan, undefined, T), {
    hasAccess: true,
    value: { max: 5 },
    source: 'plan',
    expiresAtMs: null,
  });
  assert.deepEqual(entitlementOf(seats, undefined, undefined, T), {
    hasAccess: false,
    value: null,
    source: null,
    expiresAtMs: null,
  });
  const more: FeatureOverride = { feature: 'seats', enabled: true, value: { max: 50 }, expiresAtMs: T + 1 };
  assert.deepEqual(entitlementOf(seats, plan, more, T).value, { max: 50 });
  assert.equal(entitlementOf(seats, plan, more, T).source, 'override');
  assert.deepEqual(entitlementOf(seats, plan, more, T + 1), entitlementOf(seats, plan, undefined, T + 1));
  const planValue: FeatureOverride = { feature: 'seats', enabled: true, value: null, expiresAtMs: null };
  assert.deepEqual(entitlementOf(seats, plan, planValue, T).value, { max: 5 }, "no value of its own: the plan's");
  const off: FeatureOverride = { feature: 'sso', enabled: false, value: null, expiresAtMs: null };
  assert.deepEqual(entitlementOf(sso, { feature: 'sso', value: null }, off, T), {
    hasAccess: false,
    value: null,
    source: 'override',
    expiresAtMs: null,
  });
});

test('property: access is the override in force, else the plan; only config carries a value', () => {
  fc.assert(
    fc.property(
      fc.constantFrom<FeatureRule['kind']>('boolean', 'config', 'metered'),
      fc.option(fc.integer(), { nil: undefined }),
      fc.option(
        fc.record({
          enabled: fc.boolean(),
          value: fc.option(fc.integer(), { nil: null }),
          expiresAtMs: fc.option(fc.integer({ min: T - 10, max: T + 10 }), { nil: null }),
        }),
        { nil: undefined },
      ),
      (kind, planValue, o) => {
        const f: FeatureRule = { key: 'f', kind, eventType: kind === 'metered' ? 'e' : null };
        const plan =
          planValue === undefined ? undefined : { feature: 'f', value: kind === 'config' ? planValue : null };
        const override = o && { feature: 'f', ...o };
        const e = entitlementOf(f, plan, override, T);
        const inForce = override !== undefined && (override.expiresAtMs === null || T < override.expiresAtMs);
        assert.equal(e.hasAccess, inForce ? override.enabled : plan !== undefined);
        assert.equal(e.source, inForce ? 'override' : plan !== undefined ? 'plan' : null);
        if (kind !== 'config' || !e.hasAccess) assert.equal(e.value, null);
        else assert.equal(e.value, inForce ? (override.value ?? plan?.value ?? null) : plan!.value);
      },
    ),
  );
});

test('a rule and a value name the field that makes them invalid', () => {
  const bad: [Parameters<typeof featureRuleOf>[1], string][] = [
    [{ kind: 'flag' }, 'kind'],
    [{ kind: 'metered' }, 'event_type'],
    [{ kind: 'boolean', event_type: 'x' }, 'event_type'],
    [{ kind: 'config', event_type: 'x' }, 'event_type'],
  ];
  for (const [input, param] of bad) {
    const r = featureRuleOf('k', input);
    assert.ok(!r.ok && r.param === param, JSON.stringify(input));
  }
  assert.deepEqual(featureRuleOf('k', { kind: 'metered', event_type: 'x' }), {
    ok: true,
    value: { key: 'k', kind: 'metered', eventType: 'x' },
  });
  assert.deepEqual(featureValueOf('boolean', undefined, 'value'), { ok: true, value: null });
  const onBoolean = featureValueOf('boolean', true, 'value');
  assert.ok(!onBoolean.ok && onBoolean.reason === 'value_only_for_config_features');
  assert.deepEqual(featureValueOf('config', { a: [1, 'x'] }, 'value'), { ok: true, value: '{"a":[1,"x"]}' });
  const exactly = 'x'.repeat(CONFIG_VALUE_MAX_BYTES - 2);
  assert.ok(featureValueOf('config', exactly, 'value').ok, '4 KB of JSON exactly');
  const over = featureValueOf('config', `${exactly}y`, 'value');
  assert.ok(!over.ok && over.reason === 'config_value_too_large' && over.param === 'value');
});
