/**
 * The account page's open leases: each holds units of a balance for a short time (contract "Leases"), with what it
 * held, what the events that named it used and what it still holds, and when it expires (in how long, and when);
 * one is closed here after asking, which gives what it still holds back to the balance at once.
 *
 * The list is asked for when it may have changed, and only then, so that an idle page asks nothing more than its
 * own poll (poll.ts) does: when the account that poll reads shows a balance's amount or pending moved (opening,
 * drawing from, closing and expiring a lease all move them; at most once every GAP_MS while they keep moving), when
 * the soonest expiry it shows has come, and after a person's close (which refreshes the balances too). A close
 * made elsewhere of a lease used up moves nothing: it stays listed until the next change or its expiry.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { type Account, type Lease, api, ok } from '../../api';
import { shortId, units, when } from '../../format';
import { usePoll } from '../../hooks';
import { ConfirmButton, List, Notice, useAction } from '../../ui';
import './leases.css';

/** The newest this many open leases are shown (the API lists the rest). */
const PAGE = 100;
/** While the balances keep moving, the list is asked for at most once in this long. */
const GAP_MS = 2000;

interface Loaded {
  list: Lease[];
  more: boolean;
}

/** What opening, drawing from, closing or expiring a lease moves: its balance's amount or pending. */
const footprint = (a: Account) => a.balances.map((b) => `${b.denomination}=${b.amount}/${b.pending}`).join(',');

/** How long until `iso`, as a person says it: "in 45 s", "in 4 min", "in 1 h 5 min"; "now" once it has come. */
function fromNow(iso: string, now: number): string {
  const s = Math.round((Date.parse(iso) - now) / 1000);
  if (s <= 0) return 'now';
  if (s < 90) return `in ${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `in ${min} min`;
  const h = Math.floor(min / 60);
  return min % 60 === 0 ? `in ${h} h` : `in ${h} h ${min % 60} min`;
}

/** The time now, again every `ms` while `on` (for what says how long until an instant). */
function useNow(on: boolean, ms = 1000): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    if (!on) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [on, ms]);
  return now;
}

/**
 * Calls `reload` when `mark` changes: at once, or, within GAP_MS of the last call, at its end (with the mark then);
 * and when the instant `at` comes (a finite one).
 */
function useReloads(mark: string, at: number, reload: () => Promise<void>): void {
  const s = useRef({ mark, latest: mark, calledAt: 0, timer: 0 });
  s.current.latest = mark;
  useEffect(() => {
    const st = s.current;
    if (st.mark === mark || st.timer !== 0) return;
    const run = () => {
      st.timer = 0;
      st.mark = st.latest;
      st.calledAt = Date.now();
      void reload();
    };
    const wait = st.calledAt + GAP_MS - Date.now();
    if (wait <= 0) run();
    else st.timer = window.setTimeout(run, wait);
  }, [mark]);
  useEffect(() => () => clearTimeout(s.current.timer), []);
  useEffect(() => {
    if (!Number.isFinite(at)) return;
    const timer = setTimeout(() => void reload(), Math.max(0, at - Date.now()));
    return () => clearTimeout(timer);
  }, [at]);
}

export function Leases({ account, onChange }: { account: Account; onChange: () => Promise<void> }) {
  const accountId = account.account_id;
  const hasBalances = account.balances.length > 0;
  // Loaded once here (not live): useReloads says when again.
  const leases = usePoll<Loaded>(
    async () => {
      if (!hasBalances) return { list: [], more: false };
      const page = await ok(
        api.GET('/v1/accounts/{account_id}/leases', {
          params: { path: { account_id: accountId }, query: { status: 'open', limit: PAGE } },
        }),
      );
      return { list: page.data, more: page.has_more };
    },
    [accountId],
    false,
  );
  const list = leases.data?.list ?? [];
  useReloads(footprint(account), Math.min(...list.map((l) => Date.parse(l.expires_at))), leases.reload);
  const act = useAction();
  const [done, setDone] = useState('');
  const now = useNow(list.length > 0);
  if (!hasBalances) return null;

  const close = (l: Lease) =>
    void act.run(async () => {
      setDone('');
      try {
        const r = await ok(api.POST('/v1/leases/{lease_id}/close', { params: { path: { lease_id: l.lease_id } } }));
        setDone(
          `Closed the lease ${l.lease_id}: ${units(r.data.released)} ${l.denomination} went back to the balance.`,
        );
      } finally {
        // Closed, or refused because it expired meanwhile: either way it has left the open ones.
        await Promise.all([leases.reload(), onChange()]);
      }
    });

  return (
    <section aria-labelledby="leases-h">
      <h2 id="leases-h">Leases</h2>
      {done && <Notice>{done}</Notice>}
      <List
        items={leases.data?.list}
        error={act.error ?? leases.error}
        what="leases"
        empty={
          <p class="muted">
            No open leases. A lease holds units of a balance for a few minutes so that a client can allow usage in its
            own process, and the events that carry its lease_id draw from it.
          </p>
        }
      >
        {(list) => (
          <>
            <LeaseTable leases={list} now={now} onClose={close} />
            {leases.data?.more && (
              <p class="small muted">Showing the newest {units(list.length)} open leases; the API lists the rest.</p>
            )}
          </>
        )}
      </List>
    </section>
  );
}

/** What closing gives back, asked before: the rest it holds returns to the balance, at once. */
const closeQuestion = (l: Lease) =>
  `Close ${l.lease_id}? The ${units(l.remaining)} ${l.denomination} it still holds go back to the balance now.`;

function LeaseTable(props: { leases: Lease[]; now: number; onClose: (l: Lease) => void }) {
  return (
    <div class="table-wrap">
      <table data-table="leases">
        <caption class="sr-only">Open leases, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Lease</th>
            <th scope="col">Balance</th>
            <th scope="col">Amount</th>
            <th scope="col">Used</th>
            <th scope="col">Remaining</th>
            <th scope="col">Expires</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.leases.map((l) => (
            <tr key={l.lease_id} data-lease={l.lease_id}>
              <td>
                <code>{shortId(l.lease_id)}</code>
                {l.id !== null && <div class="small muted">id {l.id}</div>}
              </td>
              <td data-field="denomination">{l.denomination}</td>
              <td class="num" data-field="amount">
                {units(l.amount)}
              </td>
              <td class="num" data-field="used">
                {units(l.used)}
              </td>
              <td class="num" data-field="remaining">
                {units(l.remaining)}
              </td>
              <td data-field="expires">
                <time dateTime={l.expires_at}>{fromNow(l.expires_at, props.now)}</time>
                <div class="small muted">{when(l.expires_at)}</div>
              </td>
              <td>
                <ConfirmButton
                  label="Close lease"
                  question={closeQuestion(l)}
                  confirm="Yes, close"
                  onConfirm={() => props.onClose(l)}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
