/**
 * The company's credit packs (top-up offers): a number of units of a balance sold for a USD price, which an
 * account's customer buys in the customer portal with the account's card, the units arriving as one paid grant.
 * Listed by offer id; a form creates one (its id chosen then, fixed after) or changes one (the PUT replaces it
 * whole; purchases already made keep what they got; the API's refusal is shown next to the field its `param`
 * names); delete after asking.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { type ApiError, type TopupOffer, api, ok } from '../api';
import { cents, units } from '../format';
import { usePoll } from '../hooks';
import { Alert, ConfirmButton, Empty, Field, List, Notice, Submit, formValues, useAction } from '../ui';

/** What the API takes as an offer id (its Denomination pattern). */
const OFFER_ID = /^[A-Za-z0-9_.:-]{1,64}$/;
const OFFER_ID_RULE = 'Letters, digits and _ . : - (1–64).';

/** "1,000 tokens". */
const packUnits = (o: TopupOffer) => `${units(o.amount)} ${o.denomination}`;
/** When the units of a purchase expire, in words. */
const validity = (o: TopupOffer) =>
  o.expires_in_days === null
    ? 'never'
    : `expires ${units(o.expires_in_days)} day${o.expires_in_days === 1 ? '' : 's'} after purchase`;

export function CreditPacksPage({ companyId }: { companyId: string }) {
  const offers = usePoll(async () => (await ok(api.GET('/v1/topup_offers'))).data, [companyId]);
  // The pack the form is filled with ("Change"; null: a new one), and a count that starts the form afresh.
  const [editing, setEditing] = useState<{ offer: TopupOffer | null; n: number; focus: boolean }>({
    offer: null,
    n: 0,
    focus: false,
  });
  const [done, setDone] = useState('');
  const known = new Set(offers.data?.map((o) => o.offer_id));
  return (
    <section>
      <h1 tabIndex={-1}>Credit packs</h1>
      <p class="muted">
        A credit pack is a number of units of a balance sold for a price, e.g. 1,000 tokens for $15.00. An account's
        customer buys them in the customer portal (open it from the account's page), paid with the account's card; the
        units arrive as one paid grant, drawn in the order of its priority. A customer sees only the packs of a balance
        their account has.
      </p>
      <PackTable
        offers={offers.data}
        error={offers.error}
        onChange={(o) => {
          setDone('');
          setEditing({ offer: o, n: editing.n + 1, focus: true });
        }}
        onDeleted={async (id) => {
          // The form no longer changes a pack that is gone: it starts afresh.
          if (editing.offer?.offer_id === id) setEditing({ offer: null, n: editing.n + 1, focus: false });
          await offers.reload();
        }}
      />
      {done && <Notice>{done}</Notice>}
      <PackForm
        key={editing.n}
        initial={editing.offer}
        focus={editing.focus}
        exists={(id) => known.has(id)}
        onSaving={() => setDone('')}
        onCancel={() => setEditing({ offer: null, n: editing.n + 1, focus: false })}
        onSaved={async (text) => {
          setDone(text);
          setEditing({ offer: null, n: editing.n + 1, focus: false });
          await offers.reload();
        }}
      />
    </section>
  );
}

interface TableProps {
  offers: TopupOffer[] | undefined;
  error: ApiError | null;
  onChange: (o: TopupOffer) => void;
  onDeleted: (offerId: string) => Promise<void>;
}

function PackTable({ offers, error, onChange, onDeleted }: TableProps) {
  return (
    <section aria-labelledby="packs-h">
      <h2 id="packs-h">Your credit packs</h2>
      <List
        items={offers}
        error={error}
        what="credit packs"
        empty={
          <Empty title="No credit packs yet">
            A credit pack is units of a balance for a price, e.g. 1,000 tokens for $15.00: customers buy them in the
            customer portal, paid with their account's card. Create one with the form below.
          </Empty>
        }
      >
        {(list) => (
          <div class="table-wrap">
            <table data-table="credit-packs">
              <caption class="sr-only">Credit packs, by offer id</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Offer id</th>
                  <th scope="col">Units</th>
                  <th scope="col">Price</th>
                  <th scope="col">Grant priority</th>
                  <th scope="col">Validity</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((o) => (
                  <PackRow key={o.offer_id} offer={o} onChange={() => onChange(o)} onDeleted={onDeleted} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </List>
    </section>
  );
}

function PackRow(props: { offer: TopupOffer; onChange: () => void; onDeleted: (offerId: string) => Promise<void> }) {
  const o = props.offer;
  const del = useAction();
  const remove = () =>
    void del.run(async () => {
      await ok(api.DELETE('/v1/topup_offers/{offer_id}', { params: { path: { offer_id: o.offer_id } } }));
      await props.onDeleted(o.offer_id);
    });
  return (
    <tr data-offer={o.offer_id}>
      <td data-field="name">{o.name}</td>
      <td>
        <code>{o.offer_id}</code>
      </td>
      <td data-field="units" class="num">
        {packUnits(o)}
      </td>
      <td data-field="price" class="num">
        {cents(o.usd_charge)}
      </td>
      <td data-field="priority" class="num">
        {o.priority}
      </td>
      <td data-field="validity">{validity(o)}</td>
      <td>
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onChange} aria-label={`Change ${o.offer_id}`}>
            Change
          </button>
          <ConfirmButton
            label="Delete"
            question={`Delete the credit pack “${o.name}” (${o.offer_id})? Purchases already made keep their units.`}
            confirm="Yes, delete"
            onConfirm={remove}
          />
        </div>
        <Alert error={del.error} />
      </td>
    </tr>
  );
}

/** The form's fields, by the name the API's error `param` gives them. */
const FIELDS = ['offer_id', 'name', 'denomination', 'amount', 'usd_charge', 'priority', 'expires_in_days'];

/** A whole number typed in a field; undefined when left empty (NaN for what is not a number: the API says so). */
const whole = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : Number(v));

type PackBody = {
  name: string;
  denomination: string;
  amount: number;
  usd_charge: number;
  priority?: number;
  expires_in_days: number | null;
};

/**
 * The form's values as the PUT's offer id and body, or what to say before asking: what the API could not take,
 * or would take wrongly (a new pack of an id in use would replace that pack).
 */
function readForm(
  v: Record<string, string>,
  initial: TopupOffer | null,
  exists: (offerId: string) => boolean,
): { problems: Record<string, string> } | { offerId: string; body: PackBody } {
  const offerId = initial ? initial.offer_id : (v.offer_id ?? '').trim();
  const amount = whole(v.amount);
  const usdCharge = whole(v.usd_charge);
  const problems: Record<string, string> = {};
  if (!initial && !OFFER_ID.test(offerId)) problems.offer_id = OFFER_ID_RULE;
  else if (!initial && exists(offerId)) problems.offer_id = `A credit pack “${offerId}” exists: use its Change button.`;
  if (amount === undefined) problems.amount = 'How many units the pack adds, e.g. 1000.';
  if (usdCharge === undefined) problems.usd_charge = 'The price in USD cents, e.g. 1500 for $15.00.';
  if (amount === undefined || usdCharge === undefined || Object.keys(problems).length > 0) return { problems };
  const priority = whole(v.priority);
  return {
    offerId,
    body: {
      name: (v.name ?? '').trim(),
      denomination: (v.denomination ?? '').trim(),
      amount,
      usd_charge: usdCharge,
      ...(priority === undefined ? {} : { priority }),
      expires_in_days: whole(v.expires_in_days) ?? null,
    },
  };
}

interface FormProps {
  initial: TopupOffer | null;
  focus: boolean;
  exists: (offerId: string) => boolean;
  onSaving: () => void;
  onCancel: () => void;
  /** Saved: what to tell the person. */
  onSaved: (text: string) => Promise<void>;
}

/** Create a credit pack, or change one: PUT of its offer id, with every field (a PUT replaces the pack whole). */
function PackForm({ initial, focus, exists, onSaving, onCancel, onSaved }: FormProps) {
  const { busy, error, run, setError } = useAction();
  const [problems, setProblems] = useState<Record<string, string>>({});
  const ref = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (focus) ref.current?.querySelector<HTMLInputElement>('input[name=name]')?.focus();
  }, [focus]);
  const submit = (e: Event) => {
    onSaving();
    const read = readForm(formValues(e), initial, exists);
    setProblems('problems' in read ? read.problems : {});
    if ('problems' in read) {
      setError(null);
      return;
    }
    void run(async () => {
      const r = await ok(
        api.PUT('/v1/topup_offers/{offer_id}', { params: { path: { offer_id: read.offerId } }, body: read.body }),
      );
      const o = r.data;
      await onSaved(
        `${initial ? 'Changed' : 'Created'} the credit pack “${o.name}” (${o.offer_id}): ` +
          `${packUnits(o)} for ${cents(o.usd_charge)}.`,
      );
    });
  };
  const param = error?.param?.replace(/^\//, '');
  const field = (n: string) => problems[n] ?? (param === n ? error?.message : undefined);
  const title = initial ? `Change “${initial.name}” (${initial.offer_id})` : 'Create a credit pack';
  return (
    <section aria-labelledby="pack-form-h" class="panel">
      <h2 id="pack-form-h">{title}</h2>
      <form ref={ref} onSubmit={submit} noValidate aria-labelledby="pack-form-h">
        <PackFields initial={initial} field={field} />
        {error && !(FIELDS.includes(param ?? '') && (param !== 'offer_id' || !initial)) && <Alert error={error} />}
        <div class="actions">
          <Submit busy={busy}>{initial ? 'Save changes' : 'Create credit pack'}</Submit>
          {initial && (
            <button type="button" class="secondary" onClick={onCancel}>
              Cancel
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

/** The form's fields, filled with the pack being changed; each with its message, by the name of the field. */
function PackFields({ initial, field }: { initial: TopupOffer | null; field: (name: string) => string | undefined }) {
  const number = (n: number | null | undefined) => (n === null || n === undefined ? '' : String(n));
  return (
    <>
      {initial ? (
        <p class="small muted">
          Saving replaces the pack <code>{initial.offer_id}</code> for purchases from now on; purchases already made
          keep what they got. Its offer id cannot change.
        </p>
      ) : (
        <Field
          label="Offer id"
          name="offer_id"
          maxLength={64}
          hint="How your code names the pack, e.g. tokens-1000. It cannot change later."
          error={field('offer_id')}
        />
      )}
      <Field
        label="Name"
        name="name"
        maxLength={100}
        defaultValue={initial?.name ?? ''}
        hint="What the customer sees, e.g. 1,000 tokens."
        error={field('name')}
      />
      <Field
        label="Denomination"
        name="denomination"
        defaultValue={initial?.denomination ?? ''}
        hint="The balance it adds to, e.g. tokens."
        error={field('denomination')}
      />
      <Field
        label="Units"
        name="amount"
        type="number"
        min={1}
        step={1}
        inputMode="numeric"
        defaultValue={number(initial?.amount)}
        hint="How many units one purchase adds."
        error={field('amount')}
      />
      <Field
        label="Price (USD cents)"
        name="usd_charge"
        type="number"
        min={1}
        step={1}
        inputMode="numeric"
        defaultValue={number(initial?.usd_charge)}
        hint="Charged to the customer's card: 1500 is $15.00."
        error={field('usd_charge')}
      />
      <Field
        label="Grant priority"
        name="priority"
        type="number"
        min={0}
        max={100}
        step={1}
        inputMode="numeric"
        placeholder="50"
        defaultValue={number(initial?.priority)}
        hint="0–100: lower numbers are used first. Empty: 50."
        error={field('priority')}
      />
      <Field
        label="Valid for (days)"
        name="expires_in_days"
        type="number"
        min={1}
        step={1}
        inputMode="numeric"
        defaultValue={number(initial?.expires_in_days)}
        hint="The units expire this many days after the purchase. Empty: never."
        error={field('expires_in_days')}
      />
    </>
  );
}
