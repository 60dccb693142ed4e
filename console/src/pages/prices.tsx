/**
 * Prices: the list, the form that sets one (price-form.tsx: unit, graduated and package prices, with the month's
 * cumulative price C(q) of what the form holds, from the server's own pricing module), and "what would this
 * cost?" through the pre-flight check, for an account picked by name (account-picker.tsx).
 */
import { useState } from 'preact/hooks';
import { type Account, type Schemas, api, ok } from '../api';
import { units, when } from '../format';
import { usePoll } from '../hooks';
import { Alert, Field, List, Submit, formValues, useAction } from '../ui';
import { AccountPicker, resolveAccount } from './account-picker';
import { PriceForm } from './price-form';

type Price = Schemas['Price'];

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

export function Prices() {
  const prices = usePoll(async () => (await ok(api.GET('/v1/prices', { params: { query: { limit: 100 } } }))).data, []);
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
        {(list) => <PriceTable prices={list} />}
      </List>
      <PriceForm onSaved={prices.reload} />
      <CostCheck />
    </section>
  );
}

/** Every price: its event type, model, terms and version. */
function PriceTable({ prices }: { prices: Price[] }) {
  return (
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
          {prices.map((p) => (
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
  );
}

/** "What would this cost?": the pre-flight check for one account (picked by name), writing nothing. */
function CostCheck() {
  const { busy, error, run } = useAction();
  const [result, setResult] = useState<string[] | null>(null);
  const [text, setText] = useState('');
  const [picked, setPicked] = useState<Account | null>(null);
  const submit = (e: Event) => {
    const v = formValues(e);
    setResult(null);
    void run(async () => {
      const account = await resolveAccount(picked, text);
      const r = await ok(
        api.POST('/v1/accounts/{account_id}/check', {
          params: { path: { account_id: account.id } },
          body: [{ type: v.event_type ?? '', quantity: Number(v.quantity) }],
        }),
      );
      const cost = r.data.events[0]?.cost;
      setResult([
        `For ${account.label}:`,
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
      <AccountPicker
        text={text}
        onText={setText}
        picked={picked}
        onPick={setPicked}
        error={error?.param === 'account_id' ? error.message : undefined}
      />
      <Field label="Event type" name="event_type" required hint="The type of the event, e.g. api_call" />
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
