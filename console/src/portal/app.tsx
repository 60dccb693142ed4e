/**
 * The customer portal's page: what an account's end customer sees of it through a portal session. The company's
 * and account's names, each balance with its grants and next expiry, usage by day for the last 30 days, the
 * transactions (newest first, a page at a time), the receipts, and, with the `topup` scope, the credit packs to
 * buy. An ended session (401 on any call) leaves only "This link has expired; ask for a new one".
 */
import type { BillingPortal, Charge, Grant, PortalAccount, TopupOffer, Transaction } from '@billing-engine/client';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { cents, date, units, usagePeriod } from '../format';
import { POPUP_BLOCKED, openHtmlWindow } from '../html-window';
import { grantName } from '../pages/account/grant-names';
import { Alert, Loading, Notice } from '../ui';
import { isExpired, say } from './session';

type Balance = PortalAccount['balances'][number];

/** What the sections share: the client, the way to report an ended session, and a count that rises on a change. */
interface Ctx {
  portal: BillingPortal;
  /** Every failed call goes through it: a 401 ends the page, anything else is said where it happened. */
  failed: (err: unknown) => string;
  version: number;
}

/** Loads `fn` when `version` changes; keeps what was loaded before while a reload runs. */
function useLoad<T>(ctx: Ctx, fn: () => Promise<T>): { data: T | undefined; error: string | null } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  useEffect(() => {
    let live = true;
    fnRef.current().then(
      (d) => {
        if (!live) return;
        setData(d);
        setError(null);
      },
      (err) => live && setError(ctx.failed(err)),
    );
    return () => {
      live = false;
    };
  }, [ctx.version]);
  return { data, error };
}

/** A moment as the day and, where it is not midnight, the time, each kept on one line (a phone wraps between). */
function When({ iso }: { iso: string }) {
  const [d, t] = date(iso).split(', ');
  return (
    <>
      <span class="nowrap">{d}</span>
      {t && (
        <>
          {', '}
          <span class="nowrap">{t}</span>
        </>
      )}
    </>
  );
}

export function Expired() {
  useEffect(() => {
    document.title = 'Link expired';
  }, []);
  return (
    <main class="narrow center portal-expired">
      <h1>This link has expired; ask for a new one.</h1>
    </main>
  );
}

export function App({ portal }: { portal: BillingPortal | null }) {
  const [expired, setExpired] = useState(portal === null);
  const [version, setVersion] = useState(0);
  const [account, setAccount] = useState<PortalAccount | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const failed = useCallback((err: unknown) => {
    if (isExpired(err)) setExpired(true);
    return say(err);
  }, []);
  const loadAccount = useCallback(async () => {
    if (!portal) return undefined;
    try {
      const a = await portal.account();
      setAccount(a);
      setError(null);
      return a;
    } catch (err) {
      setError(failed(err));
      return undefined;
    }
  }, [portal, failed]);
  useEffect(() => {
    void loadAccount();
  }, [loadAccount]);
  useEffect(() => {
    if (account) document.title = `${account.company.name} · ${account.account.name ?? 'Your account'}`;
  }, [account]);

  if (expired || !portal) return <Expired />;
  const ctx: Ctx = { portal, failed, version };
  /** After a purchase: everything reloaded, the account first (its balances are what the customer looks for). */
  const changed = async () => {
    const a = await loadAccount();
    setVersion((v) => v + 1);
    return a;
  };
  return (
    <>
      <a class="skip" href="#main">
        Skip to the content
      </a>
      <header class="top">
        <span class="brand" data-field="company">
          {account?.company.name ?? ''}
        </span>
        {account && <span class="muted small portal-until">Link valid until {date(account.expires_at)}</span>}
      </header>
      <main id="main" class="portal">
        {account === undefined ? (
          <>
            <Alert error={error} />
            {!error && <Loading what="your account" />}
          </>
        ) : (
          <>
            <h1 data-field="account">{account.account.name ?? account.account.email ?? 'Your account'}</h1>
            {account.account.email && account.account.name && <p class="muted">{account.account.email}</p>}
            <Alert error={error} />
            <Waiting ctx={ctx} />
            <Balances ctx={ctx} balances={account.balances} />
            {account.scopes.includes('topup') && <Packs ctx={ctx} onBought={changed} />}
            <Usage ctx={ctx} />
            <Transactions ctx={ctx} />
            <Receipts ctx={ctx} />
          </>
        )}
      </main>
    </>
  );
}

function Balances({ ctx, balances }: { ctx: Ctx; balances: Balance[] }) {
  return (
    <section aria-labelledby="bal-h">
      <h2 id="bal-h">Balances</h2>
      {balances.length === 0 ? (
        <p class="muted">No balance yet.</p>
      ) : (
        <ul class="balances portal-balances">
          {balances.map((b) => (
            <li key={b.denomination} class="balance" data-balance={b.denomination}>
              <h3>{b.denomination}</h3>
              <dl>
                <dt>Available</dt>
                <dd data-field="available">{units(b.available)}</dd>
                <dt>Amount</dt>
                <dd data-field="amount">{units(b.amount)}</dd>
                <dt>Pending</dt>
                <dd data-field="pending">{units(b.pending)}</dd>
              </dl>
              <p data-field="next-expiry">
                {b.next_expiry
                  ? `${units(b.next_expiry.amount)} ${b.denomination} expire on ${date(b.next_expiry.expires_at)}`
                  : 'Nothing expires.'}
              </p>
              <Grants ctx={ctx} denomination={b.denomination} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Grants({ ctx, denomination }: { ctx: Ctx; denomination: string }) {
  const { data, error } = useLoad<Grant[]>(
    ctx,
    async () => (await ctx.portal.grants(denomination, { limit: 20 })).data,
  );
  if (error) return <Alert error={error} />;
  if (!data) return <Loading what="grants" />;
  if (data.length === 0) return <p class="muted">No credit grants.</p>;
  return (
    <table class="portal-grants" data-table={`grants-${denomination}`}>
      <caption class="sr-only">Credit grants of {denomination}, used in this order</caption>
      <thead>
        <tr>
          <th scope="col">Grant</th>
          <th scope="col" class="num">
            Remaining
          </th>
          <th scope="col">Expires</th>
        </tr>
      </thead>
      <tbody>
        {data.map((g) => (
          <tr key={g.grant_id}>
            <td data-field="grant">{grantName(g)}</td>
            <td class="num" data-field="remaining">
              {units(g.remaining)}
            </td>
            <td data-field="expires">{g.expires_at ? date(g.expires_at) : 'never'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The credit packs, each with its Buy button. */
function Packs({ ctx, onBought }: { ctx: Ctx; onBought: () => Promise<PortalAccount | undefined> }) {
  const { data, error } = useLoad<TopupOffer[]>(ctx, () => ctx.portal.topupOffers());
  const [done, setDone] = useState<string | null>(null);
  return (
    <section aria-labelledby="packs-h">
      <h2 id="packs-h">Buy credits</h2>
      <Alert error={error} />
      {done && <Notice>{done}</Notice>}
      {!data ? (
        !error && <Loading what="credit packs" />
      ) : data.length === 0 ? (
        <p class="muted">No credit packs are on sale.</p>
      ) : (
        <ul class="packs">
          {data.map((o) => (
            <Pack key={o.offer_id} ctx={ctx} offer={o} onDone={setDone} onBought={onBought} />
          ))}
        </ul>
      )}
    </section>
  );
}

function Pack(props: {
  ctx: Ctx;
  offer: TopupOffer;
  onDone: (text: string | null) => void;
  onBought: () => Promise<PortalAccount | undefined>;
}) {
  const { ctx, offer: o } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [leaving, setLeaving] = useState(false);
  const buy = async () => {
    // One key per click: a retry of this click is the same purchase, a new click a new one.
    const idempotencyKey = crypto.randomUUID();
    setBusy(true);
    setError(null);
    props.onDone(null);
    try {
      const t = await ctx.portal.topup(o.offer_id, { idempotencyKey });
      if (t.status === 'requires_action' && t.next_action_url) {
        setLeaving(true);
        const next = t.next_action_url;
        setTimeout(() => location.assign(next), 800);
        return;
      }
      const a = await props.onBought();
      const b = a?.balances.find((x) => x.denomination === o.denomination);
      props.onDone(
        `Bought ${o.name}: ${units(o.amount)} ${o.denomination} added.` +
          (b ? ` Your ${o.denomination} balance is now ${units(b.available)}.` : ''),
      );
      setBusy(false);
    } catch (err) {
      setError(ctx.failed(err));
      setBusy(false);
    }
  };
  return (
    <li class="pack" data-offer={o.offer_id}>
      <h3>{o.name}</h3>
      <p>
        <span data-field="units">
          {units(o.amount)} {o.denomination}
        </span>{' '}
        for <strong data-field="price">{cents(o.usd_charge)}</strong>
        <br />
        <span class="muted small">
          {o.expires_in_days === null ? 'Never expires' : `Valid for ${units(o.expires_in_days)} days`}
        </span>
      </p>
      <button type="button" disabled={busy} aria-busy={busy ? 'true' : undefined} onClick={() => void buy()}>
        {busy ? 'Working…' : 'Buy'}
        <span class="sr-only"> {o.name}</span>
      </button>
      {leaving && (
        <Notice>
          Your bank asks you to confirm this payment: taking you to its page. Once you have confirmed, the credits are
          added; open this page's link again to see them.
        </Notice>
      )}
      <Alert error={error} />
    </li>
  );
}

const USAGE_DAYS = 30;

function Usage({ ctx }: { ctx: Ctx }) {
  const { data, error } = useLoad(ctx, async () => {
    const rows = new Map<string, { day: string; denomination: string; cost: number; events: number }>();
    const { from, to } = usagePeriod(USAGE_DAYS);
    let n = 0;
    for await (const g of ctx.portal.usage({ from, to, window: 'day', limit: 100 })) {
      const key = `${g.window_start.slice(0, 10)} ${g.denomination ?? ''}`;
      const r = rows.get(key) ?? { day: g.window_start, denomination: g.denomination ?? '', cost: 0, events: 0 };
      r.cost += g.cost;
      r.events += g.events;
      rows.set(key, r);
      if (++n > 2000) break;
    }
    return [...rows.values()].reverse();
  });
  const most = Math.max(1, ...(data ?? []).map((r) => r.cost));
  return (
    <section aria-labelledby="use-h">
      <h2 id="use-h">Usage by day, last {USAGE_DAYS} days</h2>
      <Alert error={error} />
      {!data ? (
        !error && <Loading what="usage" />
      ) : data.length === 0 ? (
        <p class="muted">No usage in the last {USAGE_DAYS} days.</p>
      ) : (
        <div class="table-wrap">
          <table data-table="usage" class="portal-usage">
            <caption class="sr-only">Usage by day, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col" class="num">
                  Events
                </th>
                <th scope="col" class="num">
                  Used
                </th>
                <th scope="col" class="bar-col">
                  <span class="sr-only">Compared with the busiest day</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.map((r) => (
                <tr key={`${r.day}-${r.denomination}`}>
                  <td>{date(r.day)}</td>
                  <td class="num">{units(r.events)}</td>
                  <td class="num">
                    {units(r.cost)} {r.denomination}
                  </td>
                  <td class="bar-col" aria-hidden="true">
                    <span class="bar" style={{ width: `${Math.max(2, Math.round((r.cost / most) * 100))}%` }} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

const KINDS: Record<Transaction['kind'], string> = {
  usage: 'Usage',
  grant: 'Credits added',
  refill: 'Refill',
  adjustment: 'Adjustment',
  proration: 'Mid-month increase',
  period_reset: 'New plan period',
  grant_expiry: 'Credits expired',
  grant_void: 'Credits withdrawn',
};
const TX_PAGE = 20;

function Transactions({ ctx }: { ctx: Ctx }) {
  const [items, setItems] = useState<Transaction[] | undefined>(undefined);
  const [cursor, setCursor] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const firstNew = useRef<HTMLTableRowElement>(null);
  /** The index of the first row "More" added, and when (a new "More" moves the focus again). */
  const [added, setAdded] = useState<{ at: number; when: number } | null>(null);
  const load = async (after: string | null) => {
    const at = items?.length ?? 0;
    setBusy(true);
    try {
      const p = await ctx.portal.transactions({ limit: TX_PAGE, ...(after ? { starting_after: after } : {}) });
      setItems((prev) => (after && prev ? [...prev, ...p.data] : p.data));
      setCursor(p.has_more ? p.next_cursor : null);
      setError(null);
      setAdded(after && p.data.length > 0 ? { at, when: Date.now() } : null);
    } catch (err) {
      setError(ctx.failed(err));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    void load(null);
  }, [ctx.version]);
  // After "More", the first new row takes the focus, so that the keyboard goes on from where the list grew.
  useEffect(() => {
    if (added !== null) firstNew.current?.focus();
  }, [added]);
  const shown = items?.length ?? 0;
  const firstNewIndex = added?.at ?? -1;
  return (
    <section aria-labelledby="tx-h">
      <h2 id="tx-h">Transactions</h2>
      <Alert error={error} />
      {!items ? (
        !error && <Loading what="transactions" />
      ) : items.length === 0 ? (
        <p class="muted">No transactions yet.</p>
      ) : (
        <>
          <div class="table-wrap">
            <table data-table="transactions">
              <caption class="sr-only">Transactions, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">What</th>
                  <th scope="col" class="num">
                    Change
                  </th>
                  <th scope="col" class="num">
                    Balance<span class="sr-only"> after</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((t, i) => (
                  <tr
                    key={t.transaction_id}
                    ref={i === firstNewIndex ? firstNew : undefined}
                    tabIndex={i === firstNewIndex ? -1 : undefined}
                  >
                    <td>
                      <When iso={t.created_at} />
                    </td>
                    <td>{KINDS[t.kind] ?? t.kind}</td>
                    <td class={t.amount < 0 ? 'num negative' : 'num'}>
                      {t.amount > 0 ? '+' : ''}
                      {units(t.amount)} {t.denomination}
                    </td>
                    <td class="num">{units(t.balance_after)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="pager">
            <span class="muted" role="status">
              {shown} shown{cursor ? '' : ', all of them'}
            </span>
            {cursor && (
              <button type="button" class="secondary" disabled={busy} onClick={() => void load(cursor)}>
                {busy ? 'Loading…' : 'More'}
                <span class="sr-only"> transactions</span>
              </button>
            )}
          </div>
        </>
      )}
    </section>
  );
}

/** Opens a receipt (fetched with the session's token) in a new window. */
async function openReceipt(portal: BillingPortal, chargeId: string): Promise<void> {
  if (!openHtmlWindow(await portal.receiptHtml(chargeId))) throw new Error(POPUP_BLOCKED);
}

const REASONS: Record<string, string> = {
  topup: 'Credit pack',
  refill: 'Automatic refill',
  monthly_refill: 'Monthly refill',
  plan: 'Plan',
};

/**
 * Payments that wait for the customer: a card that asked them to authenticate (3-D Secure), for a purchase or for
 * a refill made while they were away. Completing one applies what it was for, once.
 */
function Waiting({ ctx }: { ctx: Ctx }) {
  const { data } = useLoad<Charge[]>(ctx, async () =>
    (await ctx.portal.charges({ limit: 100 })).data.filter((c) => c.next_action_url),
  );
  if (!data || data.length === 0) return null;
  return (
    <section aria-labelledby="wt-h" data-section="waiting">
      <h2 id="wt-h">Payments waiting for you</h2>
      <p class="muted">Your bank asks you to confirm these payments. Nothing is added until you do.</p>
      <ul>
        {data.map((c) => (
          <li key={c.charge_id} data-charge={c.charge_id}>
            {REASONS[c.reason] ?? c.reason}
            {c.denomination ? ` (${c.denomination})` : ''}, {cents(c.usd_amount)}:{' '}
            <a href={c.next_action_url ?? '#'}>Confirm the payment</a>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Receipts({ ctx }: { ctx: Ctx }) {
  const { data, error } = useLoad<Charge[]>(ctx, async () =>
    (await ctx.portal.charges({ limit: 100 })).data.filter((c) => c.receipt_number),
  );
  return (
    <section aria-labelledby="rc-h">
      <h2 id="rc-h">Receipts</h2>
      <Alert error={error} />
      {!data ? (
        !error && <Loading what="receipts" />
      ) : data.length === 0 ? (
        <p class="muted">No receipts yet: a payment's receipt shows here.</p>
      ) : (
        <div class="table-wrap">
          <table data-table="receipts">
            <caption class="sr-only">Receipts, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Receipt</th>
                <th scope="col">Date</th>
                <th scope="col">For</th>
                <th scope="col" class="num">
                  Amount
                </th>
              </tr>
            </thead>
            <tbody>
              {data.map((c) => (
                <tr key={c.charge_id} data-charge={c.charge_id}>
                  <td>
                    <ReceiptButton ctx={ctx} charge={c} />
                  </td>
                  <td>
                    <When iso={c.created_at} />
                  </td>
                  <td>
                    {REASONS[c.reason] ?? c.reason}
                    {c.denomination ? ` (${c.denomination})` : ''}
                  </td>
                  <td class="num">{cents(c.usd_amount)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function ReceiptButton({ ctx, charge }: { ctx: Ctx; charge: Charge }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const open = async () => {
    setBusy(true);
    setError(null);
    try {
      await openReceipt(ctx.portal, charge.charge_id);
    } catch (err) {
      setError(ctx.failed(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        class="link"
        disabled={busy}
        aria-busy={busy ? 'true' : undefined}
        onClick={() => void open()}
      >
        {charge.receipt_number}
        <span class="sr-only"> (open the receipt in a new window)</span>
      </button>
      <Alert error={error} />
    </>
  );
}
