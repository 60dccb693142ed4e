/** The account page's events, newest first, of every state or of one. */
import type { ApiError, BillingEvent } from '../../api';
import { units, when } from '../../format';
import { List, Select } from '../../ui';
import type { EventState } from './view';

const STATES = [
  { value: '', label: 'All states' },
  { value: 'pending', label: 'Pending' },
  { value: 'complete', label: 'Complete' },
  { value: 'cancelled', label: 'Cancelled' },
];

export function Events(props: {
  events: { state: EventState; list: BillingEvent[] } | undefined;
  error?: ApiError | undefined;
  state: EventState;
  onState: (state: EventState) => void;
}) {
  const { state } = props;
  // Events of the state chosen before are not shown as those of the state chosen now.
  const items = props.events?.state === state ? props.events.list : undefined;
  return (
    <section aria-labelledby="ev-h">
      <div class="row">
        <h2 id="ev-h">Events</h2>
        <Select
          label="State"
          name="event-state"
          value={state}
          onChange={(v) => props.onState(v as EventState)}
          options={STATES}
        />
      </div>
      <List items={items} error={props.error} what="events" empty={<p class="muted">No {state || ''} events.</p>}>
        {(list) => <EventTable events={list} name="events" />}
      </List>
    </section>
  );
}

function EventTable({ events, name }: { events: BillingEvent[]; name: string }) {
  return (
    <div class="table-wrap">
      <table data-table={name}>
        <caption class="sr-only">{name}</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Type</th>
            <th scope="col">Quantity</th>
            <th scope="col">Cost</th>
            <th scope="col">State</th>
            <th scope="col">Event id</th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => (
            <tr key={e.event_id}>
              <td>{when(e.timestamp)}</td>
              <td>{e.type}</td>
              <td class="num">{units(e.quantity)}</td>
              <td class="num">
                {units(e.cost.amount)} {e.cost.denomination}
              </td>
              <td>
                <span class={`state state-${e.state}`}>{e.state}</span>
                {e.state === 'pending' && e.expires_at && <div class="small">expires {when(e.expires_at)}</div>}
              </td>
              <td class="small">
                <code>{e.event_id}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
