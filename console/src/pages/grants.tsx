/**
 * The company's grants: those expiring in the next 30 days (live; each account named, linking to its page), and per
 * denomination the paid units still outstanding with their value at each grant's cost basis. The value is exact:
 * cost bases are decimal strings of USD cents, summed with the server's own decimal module (src/lib/decimal.ts, pure).
 */
import { useRef, useState } from 'preact/hooks';
import {
  type Decimal,
  DECIMAL_ZERO,
  addDecimal,
  decimalOfInteger,
  formatDecimal,
  multiplyDecimal,
  parseDecimal,
} from '../../../src/lib/decimal';
import { type Grant, allPages, api, ok } from '../api';
import { DAY, date, shortId, units, when } from '../format';
import { usePoll } from '../hooks';
import { Empty, List } from '../ui';
import { grantName } from './account/grant-names';
import { nameAccounts } from './account-names';

/** How far ahead the expiring list looks. */
const EXPIRING_DAYS = 30;
/** Pages of the expiring list (100 grants each). */
const EXPIRING_MAX_PAGES = 10;
/** Pages of active grants summed for the paid units outstanding (100 grants each). */
const OUTSTANDING_MAX_PAGES = 100;

type GrantPage = { data: Grant[]; has_more: boolean; next_cursor: string | null };

const listGrants = (
  query: { status?: string; expires_before?: string; category?: 'paid' | 'promotional' },
  cursor: string | undefined,
) =>
  ok(
    api.GET('/v1/grants', {
      params: { query: { limit: 100, ...query, ...(cursor ? { starting_after: cursor } : {}) } },
    }),
  );

export function GrantsPage({ companyId }: { companyId: string }) {
  return (
    <section>
      <h1 tabIndex={-1}>Grants</h1>
      <p class="muted">
        Grants are the lots of units on your accounts' balances. Each account's page lists its grants, adds one and
        voids one.
      </p>
      <Expiring companyId={companyId} />
      <Outstanding />
    </section>
  );
}

function Expiring({ companyId }: { companyId: string }) {
  // Each account's name, asked for once, as its grants first appear.
  const names = useRef(new Map<string, string>());
  const list = usePoll(async () => {
    const expires_before = new Date(Date.now() + EXPIRING_DAYS * DAY).toISOString();
    const grants = await allPages<Grant>((c) => listGrants({ expires_before }, c), EXPIRING_MAX_PAGES);
    await nameAccounts(
      grants.map((g) => g.account_id),
      names.current,
    );
    return grants;
  }, [companyId]);
  return (
    <section aria-labelledby="expiring-h">
      <h2 id="expiring-h">Expiring in the next {EXPIRING_DAYS} days</h2>
      <p class="small muted">
        Active and scheduled grants, soonest first. What is left of a grant when it expires leaves its balance; units
        held by pending events go when those settle.
      </p>
      <List
        items={list.data}
        error={list.error}
        what="expiring grants"
        empty={<Empty title="Nothing expires in the next 30 days">Grants without an expiry never expire.</Empty>}
      >
        {(grants) => (
          <div class="table-wrap">
            <table data-table="expiring">
              <caption class="sr-only">Grants expiring in the next {EXPIRING_DAYS} days</caption>
              <thead>
                <tr>
                  <th scope="col">Expires</th>
                  <th scope="col">Grant</th>
                  <th scope="col">Remaining / amount</th>
                  <th scope="col">Balance</th>
                  <th scope="col">Account</th>
                  <th scope="col">Category</th>
                </tr>
              </thead>
              <tbody>
                {grants.map((g) => (
                  <tr key={g.grant_id} data-grant={g.grant_id}>
                    <td>{g.expires_at ? date(g.expires_at) : ''}</td>
                    <td class="grant-name">
                      <span>{grantName(g)}</span>
                      <code class="small muted">{shortId(g.grant_id)}</code>
                    </td>
                    <td class="num">
                      {units(g.remaining)} / {units(g.amount)}
                    </td>
                    <td>{g.denomination}</td>
                    <td data-field="account">
                      <AccountLink companyId={companyId} id={g.account_id} name={names.current.get(g.account_id)} />
                    </td>
                    <td>{g.category}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </List>
    </section>
  );
}

/** The account's name linking to its page, with its id under it (the id alone while its name is not known). */
function AccountLink({ companyId, id, name }: { companyId: string; id: string; name: string | undefined }) {
  return (
    <a class="account-link" href={`/c/${companyId}/accounts/${encodeURIComponent(id)}`}>
      {name && name !== id && <span class="stack">{name}</span>}
      <code class="small stack">{id}</code>
    </a>
  );
}

interface Row {
  denomination: string;
  grants: number;
  units: number;
  /** USD cents, exact, of the units with a cost basis. */
  value: Decimal;
  /** Units of paid grants without a cost basis (not in `value`). */
  unpriced: number;
}

/** Sums the active paid grants by denomination. */
export function outstanding(grants: readonly Grant[]): Row[] {
  const rows = new Map<string, Row>();
  for (const g of grants) {
    if (g.category !== 'paid' || g.status !== 'active' || g.remaining === 0) continue;
    let r = rows.get(g.denomination);
    if (!r) {
      r = { denomination: g.denomination, grants: 0, units: 0, value: DECIMAL_ZERO, unpriced: 0 };
      rows.set(g.denomination, r);
    }
    r.grants += 1;
    r.units += g.remaining;
    const basis = g.cost_basis === null ? null : parseDecimal(g.cost_basis);
    if (basis) r.value = addDecimal(r.value, multiplyDecimal(decimalOfInteger(g.remaining), basis));
    else r.unpriced += g.remaining;
  }
  return [...rows.values()].sort((a, b) => (a.denomination < b.denomination ? -1 : 1));
}

/** Cents as dollars, exactly: at least two decimals, more where the cost bases give more ("$11.725"). */
export function dollars(centsValue: Decimal): string {
  const text = formatDecimal({ coef: centsValue.coef, scale: centsValue.scale + 2 });
  const [whole = '0', frac = ''] = text.split('.');
  return `$${BigInt(whole).toLocaleString('en-US')}.${frac.padEnd(2, '0')}`;
}

function Outstanding() {
  const [tick, setTick] = useState(0);
  // Every active paid grant, page by page: asked for when the page opens and on "Sum again", not every second.
  const sums = usePoll(
    async () => {
      let pages = 0;
      let more = false;
      const grants = await allPages<Grant>(async (c) => {
        const p: GrantPage = await listGrants({ status: 'active', category: 'paid' }, c);
        pages += 1;
        more = p.has_more && pages === OUTSTANDING_MAX_PAGES;
        return p;
      }, OUTSTANDING_MAX_PAGES);
      return { rows: outstanding(grants), scanned: grants.length, more, at: new Date().toISOString() };
    },
    [tick],
    false,
  );
  const d = sums.data;
  return (
    <section aria-labelledby="outstanding-h" class="outstanding">
      <div class="row">
        <h2 id="outstanding-h">Paid units outstanding</h2>
        <button type="button" class="secondary" onClick={() => setTick(tick + 1)} disabled={sums.loading}>
          Sum again
        </button>
      </div>
      <p class="small muted">
        The sum of what remains of the active paid grants (bought units, refills, plan periods), valued at each grant's
        cost basis in USD. Promotional grants, and grants that are scheduled, used up, expired or voided, are not
        counted.
        {d && ` Summed ${units(d.scanned)} active paid grants at ${when(d.at)}.`}
      </p>
      {d?.more && (
        <p class="banner small">
          Only the first {units(d.scanned)} active paid grants were summed: there are more, so these figures are too
          low.
        </p>
      )}
      <List
        items={d?.rows}
        error={sums.error}
        what="paid grants"
        empty={<p class="muted">No active paid grants: no paid units are outstanding.</p>}
      >
        {(rows) => (
          <div class="table-wrap">
            <table data-table="outstanding">
              <caption class="sr-only">Paid units outstanding by denomination</caption>
              <thead>
                <tr>
                  <th scope="col">Balance</th>
                  <th scope="col">Paid grants</th>
                  <th scope="col">Units left</th>
                  <th scope="col">Value at cost basis</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.denomination} data-denomination={r.denomination}>
                    <td>{r.denomination}</td>
                    <td class="num">{units(r.grants)}</td>
                    <td class="num" data-field="units">
                      {units(r.units)}
                    </td>
                    <td class="num" data-field="value">
                      {dollars(r.value)}
                      {r.unpriced > 0 && <div class="small muted">{units(r.unpriced)} units have no cost basis</div>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </List>
    </section>
  );
}
