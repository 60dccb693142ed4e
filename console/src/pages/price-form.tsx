/**
 * The prices page's form: set a unit, graduated (a tier table with add and remove) or package price, with the
 * month's cumulative price C(q) of what the form holds. C(q) is computed by the server's own pricing module
 * (src/domain/pricing.ts, pure), so the preview cannot disagree with what the events call charges. Apart from the
 * page (prices.tsx) because the terms being typed are the form's own state, which the list and the check never read.
 */
import { useState } from 'preact/hooks';
import { cumulativePrice, parsePriceTerms, type PriceInput, type PriceTerms } from '../../../src/domain/pricing';
import { ceilDecimal, decimalFromNumber } from '../../../src/lib/decimal';
import { api, ok } from '../api';
import { units } from '../format';
import { Alert, Field, Notice, Select, Submit, formValues, useAction } from '../ui';

type Model = 'unit' | 'graduated' | 'package';
interface TierRow {
  key: number;
  up_to: string;
  unit_amount: string;
  flat_amount: string;
}
let tierKeys = 0;
const newTier = (up_to = ''): TierRow => ({ key: ++tierKeys, up_to, unit_amount: '', flat_amount: '' });

/** The message of the API's refusal when it names this field. */
type FieldError = (name: string) => string | undefined;

/** The fields the form shows, by the API's `param`: a refusal of any other goes above the button. */
const PLACED = ['type', 'denomination', 'model', 'unit_amount', 'package_size', 'package_amount', 'tiers'];
const TIER_PARAM = /^tiers\[\d+\]\./;

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

/** The terms being typed (each model keeps its own while another is chosen), and the price input they make. */
function usePriceTerms() {
  const [model, setModel] = useState<Model>('unit');
  const [tiers, setTiers] = useState<TierRow[]>([newTier('1000'), newTier()]);
  const [pkg, setPkg] = useState({ size: '', amount: '' });
  const [unit, setUnit] = useState('');
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
  const tierEdits: TierEdits = {
    set: (key, change) => setTiers(tiers.map((t) => (t.key === key ? { ...t, ...change } : t))),
    remove: (t) => setTiers(tiers.filter((x) => x !== t)),
    // A new tier goes before the last, which has no bound.
    add: () => setTiers([...tiers.slice(0, -1), newTier(), ...tiers.slice(-1)]),
  };
  return { model, setModel, tiers, tierEdits, pkg, setPkg, unit, setUnit, input };
}

interface TierEdits {
  set: (key: number, change: Partial<TierRow>) => void;
  remove: (t: TierRow) => void;
  add: () => void;
}

/** Set a price: PUT of its event type, a new version of it when it exists. `onSaved`: the list loads again. */
export function PriceForm({ onSaved }: { onSaved: () => Promise<void> }) {
  const { busy, error, run } = useAction();
  const terms = usePriceTerms();
  const [saved, setSaved] = useState('');
  const preview = parsePriceTerms(terms.input());
  const submit = (e: Event) => {
    const v = formValues(e);
    void run(async () => {
      const price = await ok(
        api.PUT('/v1/prices/{type}', {
          params: { path: { type: v.type ?? '' } },
          body: { denomination: v.denomination ?? '', ...terms.input() },
        }),
      );
      setSaved(`Saved: ${price.data.type} is version ${price.data.version}.`);
      await onSaved();
    });
  };
  const field: FieldError = (name) => (error?.param === name ? error.message : undefined);
  // The tier table names its fields by their column; the message names the tier and the field.
  const tierError = error && (error.param === 'tiers' || TIER_PARAM.test(error.param ?? '')) ? error.message : null;
  const { model } = terms;
  return (
    <form onSubmit={submit}>
      <h3>Set a price</h3>
      <Field label="Event type" name="type" required error={field('type')} />
      <Field label="Denomination" name="denomination" required error={field('denomination')} />
      <Select
        label="Model"
        name="model"
        value={model}
        onChange={(m) => terms.setModel(m as Model)}
        options={[
          { value: 'unit', label: 'Unit: per unit' },
          { value: 'graduated', label: 'Graduated: tiers of the month' },
          { value: 'package', label: 'Package: per started block' },
        ]}
        error={field('model')}
      />
      {model === 'unit' && <UnitField value={terms.unit} onValue={terms.setUnit} field={field} />}
      {model === 'package' && <PackageFields pkg={terms.pkg} onPkg={terms.setPkg} field={field} />}
      {model === 'graduated' && (
        <TierTable tiers={terms.tiers} edits={terms.tierEdits} field={field} error={tierError} />
      )}
      {preview.ok && model !== 'unit' && <PriceCurve terms={preview.value} />}
      {error && !PLACED.includes(error.param ?? '') && !TIER_PARAM.test(error.param ?? '') && <Alert error={error} />}
      {saved && !error && <Notice>{saved}</Notice>}
      <Submit busy={busy}>Save price</Submit>
    </form>
  );
}

const typed = (e: Event) => (e.target as HTMLInputElement).value;

function UnitField(props: { value: string; onValue: (v: string) => void; field: FieldError }) {
  return (
    <Field
      label="Unit amount"
      name="unit_amount"
      required
      inputMode="decimal"
      hint="Exact decimal, e.g. 0.25"
      value={props.value}
      onInput={(e) => props.onValue(typed(e))}
      error={props.field('unit_amount')}
    />
  );
}

type Package = { size: string; amount: string };

function PackageFields({ pkg, onPkg, field }: { pkg: Package; onPkg: (p: Package) => void; field: FieldError }) {
  return (
    <div class="row">
      <Field
        label="Package size"
        name="package_size"
        inputMode="numeric"
        hint="Units per block"
        value={pkg.size}
        onInput={(e) => onPkg({ ...pkg, size: typed(e) })}
        error={field('package_size')}
      />
      <Field
        label="Package amount"
        name="package_amount"
        inputMode="decimal"
        hint="Per started block"
        value={pkg.amount}
        onInput={(e) => onPkg({ ...pkg, amount: typed(e) })}
        error={field('package_amount')}
      />
    </div>
  );
}

interface TierTableProps {
  tiers: TierRow[];
  edits: TierEdits;
  field: FieldError;
  /** A refusal of the tiers or of one tier's field. */
  error: string | null;
}

function TierTable({ tiers, edits, field, error }: TierTableProps) {
  return (
    <fieldset class="tiers">
      <legend>Tiers</legend>
      <p class="small muted">
        The last tier has no bound. A flat amount is due once, when the month's quantity enters its tier.
      </p>
      {error && <Alert error={error} />}
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
            {tiers.map((t, i) => (
              <TierLine key={t.key} tier={t} index={i} count={tiers.length} edits={edits} field={field} />
            ))}
          </tbody>
        </table>
      </div>
      <button type="button" class="secondary" onClick={edits.add}>
        Add a tier
      </button>
    </fieldset>
  );
}

interface TierLineProps {
  tier: TierRow;
  index: number;
  count: number;
  edits: TierEdits;
  field: FieldError;
}

/** One tier's row: its inputs are labelled by tier and column; the last tier's bound is ∞ and cannot be typed. */
function TierLine({ tier: t, index: i, count, edits, field }: TierLineProps) {
  const last = i === count - 1;
  const cell = (name: 'up_to' | 'unit_amount' | 'flat_amount', label: string, inputMode: 'numeric' | 'decimal') => (
    <input
      aria-label={`Tier ${i + 1} ${label}`}
      aria-invalid={field(`tiers[${i}].${name}`) ? 'true' : undefined}
      inputMode={inputMode}
      value={name === 'up_to' && last ? '' : t[name]}
      disabled={name === 'up_to' && last}
      placeholder={name === 'up_to' && last ? '∞' : name === 'flat_amount' ? 'none' : ''}
      onInput={(e) => edits.set(t.key, { [name]: typed(e) })}
    />
  );
  return (
    <tr data-tier={i}>
      <td class="num">{i + 1}</td>
      <td>{cell('up_to', 'up to', 'numeric')}</td>
      <td>{cell('unit_amount', 'unit amount', 'decimal')}</td>
      <td>{cell('flat_amount', 'flat amount', 'decimal')}</td>
      <td>
        {count > 1 && (
          <button type="button" class="secondary" aria-label={`Remove tier ${i + 1}`} onClick={() => edits.remove(t)}>
            Remove
          </button>
        )}
      </td>
    </tr>
  );
}

/** The preview: C(q) at a few quantities worth seeing, of the terms the form holds now. */
function PriceCurve({ terms }: { terms: PriceTerms }) {
  return (
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
          {samples(terms).map((q) => (
            <tr key={q}>
              <td class="num">{units(q)}</td>
              <td class="num">{monthCost(terms, q)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
