/** The account page's pending holds: the pending events, each holding its cost until settled or expired. */
import type { ApiError, BillingEvent } from '../../api';
import { units, when } from '../../format';
import { List } from '../../ui';

export function Holds({ holds, error }: { holds: BillingEvent[] | undefined; error?: ApiError | undefined }) {
  return (
    <section aria-labelledby="holds-h" class="panel">
      <h2 id="holds-h">Pending holds</h2>
      <List
        items={holds}
        error={error}
        what="holds"
        empty={
          <p class="muted">
            No pending events. A pending event holds its cost until it is settled or expires; open leases (below) hold
            units too.
          </p>
        }
      >
        {(list) => (
          <ul class="holds">
            {list.map((e) => (
              <li key={e.event_id}>
                <strong>
                  {units(e.cost.amount)} {e.cost.denomination}
                </strong>{' '}
                for {e.type} <code>{e.event_id}</code>, expires {when(e.expires_at)}
              </li>
            ))}
          </ul>
        )}
      </List>
    </section>
  );
}
