/**
 * Prices: the list, a form for unit, graduated (a tier table with add and remove) and package prices, the month's
 * cumulative price C(q) of what the form holds, and "what would this cost?" through the pre-flight check. C(q) is
 * computed by the server's own pricing module (src/domain/pricing.ts, pure), so the preview cannot disagree with
 * what the events call charges.
 */
import { useState } from 'preact/hooks';
import { cumulativePrice, parsePriceTerms, type PriceInput, type PriceTerms } from '../../../src/domain/pricing';
import { ceilDecimal, decimalFromNumber } from '../../../src/lib/decimal';
import { type Schemas, api, ok } from '../api';
import { units, when } from '../format';
import { usePoll } from '../hooks';
import { Alert, Field, List, Notice, Select, Submit, formValues, useAction } from '../ui';

type Price = Schemas['Price'];
type Model = 'unit' | 'graduated' | 'package';
interface TierRow {
  key: number;
  up_to: string;
  unit_amount: string;
  flat_amount: string;
}
let tierKeys = 0;
const newTier = (up_to = ''): TierRow => ({ key: ++tierKeys, up_to, unit_amount: '', flat_amount: '' });

/** How a price charges, in a few words. */
function terms(p: Price): string {
  if (p.model === 'graduated')
    return (p.tiers ?? [])
      .map((t) => {
        const bound = t.up_to === null ? 'then' : `to ${units(t.up_to)}`;
        return `${bound}: ${t.unit_amount}${t.flat_amount ? ` + ${t.flat_amount}` : ''}`;
      })
      .join('; ');
  if (p.model === 'package') return `${p.package_amount} per started ${units(p.package_size)}`;
  return `${p.unit_amount} per unit`;
}

/** Quantities worth showing C at: each tier's bound and past the last; a few package blocks. */
function samples(t: PriceTerms): number[] {
  if (t.model === 'package') return [1, t.packageSize, t.packageSize + 1, 10 * t.packageSize];
  if (t.model === 'unit') return [1, 10, 100, 1000];
  const bounds = t.tiers.flatMap((x) => (x.upTo === null ? [] : [x.upTo]));
  const last = bounds.at(-1) ?? 100;
  return [...new Set([1, ...bounds, ...bounds.map((b) => b + 1), last * 2])].sort((a, b) => a - b);
}

/** The month's cost of q units, rounded up: what a month of exactly q units is charged. */
const monthCost = (t: PriceTerms, q: number): string =>
  ceilDecimal(cumulativePrice(t, decimalFromNumber(q)!)).toString();

export function Prices() {
  const prices = usePoll(async () => (await ok(api.GET('/v1/prices', { params: { query: { limit: 100 } } }))).data, []);
  const { busy, error, run } = useAction();
  const [model, setModel] = useState<Model>('unit');
  const [tiers, setTiers] = useState<TierRow[]>([newTier('1000'), newTier()]);
  const [pkg, setPkg] = useState({ size: '', amount: '' });
  const [unit, setUnit] = useState('');
  const [saved, setSaved] = useState('');

  const input = (): PriceInput => {
    if (model === 'graduated')
      return {
        model,
        tiers: tiers.map((t, i) => ({
          up_to: i === tiers.length - 1 || t.up_to.trim() === '' ? null : Number(t.up_to),
          unit_amount: t.unit_amount.trim(),
          ...(t.flat_amount.trim() === '' ? {} : { flat_amount: t.flat_amount.trim() }),
        })),
      };
    if (model === 'package') return { model, package_size: Number(pkg.size), package_amount: pkg.amount.trim() };
    return { model, unit_amount: unit.trim() };
  };
  const preview = parsePriceTerms(input());

  const submit = (e: Event) => {
    const v = formValues(e);
    void run(async () => {
      const price = await ok(
        api.PUT('/v1/prices/{type}', {
          params: { path: { type: v.type ?? '' } },
          body: { denomination: v.denomination ?? '', ...input() },
        }),
      );
      setSaved(`Saved: ${price.data.type} is version ${price.data.version}.`);
      await prices.reload();
    });
  };
  const field = (name: string) => (error?.param === name ? error.message : undefined);
  const placed = ['type', 'denomination', 'model', 'unit_amount', 'package_size', 'package_amount', 'tiers'];
  const tierParam = /^tiers\[\d+\]\./;
  // The tier table names its fields by their column; the message names the tier and the field.
  const tierError = error && (error.param === 'tiers' || tierParam.test(error.param ?? '')) ? error.message : null;
  const setTier = (key: number, change: Partial<TierRow>) =>
    setTiers(tiers.map((t) => (t.key === key ? { ...t, ...change } : t)));

  return (
    <section aria-labelledby="prices-h" class="panel">
      <h2 id="prices-h">Prices</h2>
      <p class="small muted">
        Unit: quantity × unit amount, rounded up per event. Graduated and package prices count the account's month of
        that event type: each event costs what the month costs with it minus what it cost without it.
      </p>
      <List
        items={prices.data}
        error={prices.error}
        what="prices"
        empty={<p class="muted">No prices yet. Events of a type without a price need a cost_override.</p>}
      >
        {(list) => (
          <div class="table-wrap">
            <table data-table="prices">
              <caption class="sr-only">Prices</caption>
              <thead>
                <tr>
                  <th scope="col">Event type</th>
                  <th scope="col">Model</th>
                  <th scope="col">Terms</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {list.map((p) => (
                  <tr key={p.type}>
                    <td>{p.type}</td>
                    <td>{p.model}</td>
                    <td>
                      {terms(p)} ({p.denomination})
                    </td>
                    <td>
                      {when(p.updated_at)} (v{p.version})
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </List>
      <form onSubmit={submit}>
        <h3>Set a price</h3>
        <Field label="Event type" name="type" required error={field('type')} />
        <Field label="Denomination" name="denomination" required error={field('denomination')} />
        <Select
          label="Model"
          name="model"
          value={model}
          onChange={(m) => setModel(m as Model)}
          options={[
            { value: 'unit', label: 'Unit: per unit' },
            { value: 'graduated', label: 'Graduated: tiers of the month' },
            { value: 'package', label: 'Package: per started block' },
          ]}
          error={field('model')}
        />
        {model === 'unit' && (
          <Field
            label="Unit amount"
            name="unit_amount"
            required
            inputMode="decimal"
            hint="Exact decimal, e.g. 0.25"
            value={unit}
            onInput={(e) => setUnit((e.target as HTMLInputElement).value)}
            error={field('unit_amount')}
          />
        )}
        {model === 'package' && (
          <div class="row">
            <Field
              label="Package size"
              name="package_size"
              inputMode="numeric"
              hint="Units per block"
              value={pkg.size}
              onInput={(e) => setPkg({ ...pkg, size: (e.target as HTMLInputElement).value })}
              error={field('package_size')}
            />
            <Field
              label="Package amount"
              name="package_amount"
              inputMode="decimal"
              hint="Per started block"
              value={pkg.amount}
              onInput={(e) => setPkg({ ...pkg, amount: (e.target as HTMLInputElement).value })}
              error={field('package_amount')}
            />
          </div>
        )}
        {model === 'graduated' && (
          <fieldset class="tiers">
            <legend>Tiers</legend>
            <p class="small muted">
              The last tier has no bound. A flat amount is due once, when the month's quantity enters its tier.
            </p>
            {tierError && <Alert error={tierError} />}
            <div class="table-wrap">
              <table data-table="tiers" class="tiers">
                <caption class="sr-only">Tiers</caption>
                <thead>
                  <tr>
                    <th scope="col">Tier</th>
                    <th scope="col">Up to</th>
                    <th scope="col">Unit amount</th>
                    <th scope="col">Flat amount</th>
                    <th scope="col">
                      <span class="sr-only">Remove</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {tiers.map((t, i) => {
                    const last = i === tiers.length - 1;
                    const cell = (
                      name: 'up_to' | 'unit_amount' | 'flat_amount',
                      label: string,
                      inputMode: 'numeric' | 'decimal',
                    ) => (
                      <input
                        aria-label={`Tier ${i + 1} ${label}`}
                        aria-invalid={field(`tiers[${i}].${name}`) ? 'true' : undefined}
                        inputMode={inputMode}
                        value={name === 'up_to' && last ? '' : t[name]}
                        disabled={name === 'up_to' && last}
                        placeholder={name === 'up_to' && last ? '∞' : name === 'flat_amount' ? 'none' : ''}
                        onInput={(e) => setTier(t.key, { [name]: (e.target as HTMLInputElement).value })}
                      />
                    );
                    return (
                      <tr key={t.key} data-tier={i}>
                        <td class="num">{i + 1}</td>
                        <td>{cell('up_to', 'up to', 'numeric')}</td>
                        <td>{cell('unit_amount', 'unit amount', 'decimal')}</td>
                        <td>{cell('flat_amount', 'flat amount', 'decimal')}</td>
                        <td>
                          {tiers.length > 1 && (
                            <button
                              type="button"
                              class="secondary"
                              aria-label={`Remove tier ${i + 1}`}
                              onClick={() => setTiers(tiers.filter((x) => x !== t))}
                            >
                              Remove
                            </button>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
            <button
              type="button"
              class="secondary"
              onClick={() => setTiers([...tiers.slice(0, -1), newTier(), ...tiers.slice(-1)])}
            >
              Add a tier
            </button>
          </fieldset>
        )}
        {preview.ok && model !== 'unit' && (
          <div class="table-wrap">
            <table data-table="price-curve">
              <caption>A month of q units costs C(q), rounded up</caption>
              <thead>
                <tr>
                  <th scope="col">q</th>
                  <th scope="col">C(q)</th>
                </tr>
              </thead>
              <tbody>
                {samples(preview.value).map((q) => (
                  <tr key={q}>
                    <td class="num">{units(q)}</td>
                    <td class="num">{monthCost(preview.value, q)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {error && !placed.includes(error.param ?? '') && !tierParam.test(error.param ?? '') && <Alert error={error} />}
        {saved && !error && <Notice>{saved}</Notice>}
        <Submit busy={busy}>Save price</Submit>
      </form>
      <CostCheck />
    </section>
  );
}

/** "What would this cost?": the pre-flight check for one account, writing nothing. */
function CostCheck() {
  const { busy, error, run } = useAction();
  const [result, setResult] = useState<string[] | null>(null);
  const submit = (e: Event) => {
    const v = formValues(e);
    setResult(null);
    void run(async () => {
      const r = await ok(
        api.POST('/v1/accounts/{account_id}/check', {
          params: { path: { account_id: v.account_id ?? '' } },
          body: [{ type: v.event_type ?? '', quantity: Number(v.quantity) }],
        }),
      );
      const cost = r.data.events[0]?.cost;
      setResult([
        `Cost: ${units(cost?.amount)} ${cost?.denomination ?? ''}`,
        ...r.data.balances.map(
          (b) => `${b.denomination}: ${units(b.available)} available, ${units(b.available_after)} after`,
        ),
        r.data.allowed ? 'The account can afford it.' : 'The account cannot afford it.',
      ]);
    });
  };
  return (
    <form onSubmit={submit} aria-labelledby="check-h">
      <h3 id="check-h">What would this cost?</h3>
      <Field
        label="Account"
        name="account_id"
        required
        hint="a_…"
        error={error?.param === 'account_id' ? error.message : undefined}
      />
      <Field label="Event kind" name="event_type" required hint="The event's type" />
      <Field label="Quantity" name="quantity" required inputMode="decimal" />
      {error && error.param !== 'account_id' && <Alert error={error} />}
      {result && (
        <output data-check-result>
          {result.map((line) => (
            <div key={line}>{line}</div>
          ))}
        </output>
      )}
      <Submit busy={busy}>Check</Submit>
    </form>
  );
}
