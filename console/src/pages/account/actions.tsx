/** The account page's actions: one tab each, each tab's form in a file of its own. */
import { useState } from 'preact/hooks';
import { AddGrant } from './add-grant';
import { Adjust } from './adjust';
import { AccountAlerts } from './alerts';
import { AttachCard } from './attach-card';
import { AutoRefill } from './auto-refill';
import { CreateBalance } from './create-balance';
import { AccountFeatures } from './features';
import type { ActionProps } from './form-parts';
import { SpendLimits } from './limits';
import { MidMonth } from './mid-month';

const ACTIONS = [
  ['adjust', 'Adjust'],
  ['grant', 'Add grant'],
  ['create', 'New balance'],
  ['refill', 'Auto-refill'],
  ['limits', 'Spend limits'],
  ['alerts', 'Alerts'],
  ['features', 'Features'],
  ['card', 'Card'],
  ['midmonth', 'Mid-month increase'],
] as const;
type ActionName = (typeof ACTIONS)[number][0];

export function Actions(props: ActionProps) {
  const hasBalances = props.account.balances.length > 0;
  const [tab, setTab] = useState<ActionName>(hasBalances ? 'adjust' : 'create');
  return (
    <section aria-labelledby="act-h" class="panel">
      <h2 id="act-h">Actions</h2>
      <div class="tabs" role="tablist" aria-label="Actions">
        {ACTIONS.map(([name, label]) => (
          <button
            key={name}
            type="button"
            role="tab"
            id={`tab-${name}`}
            aria-selected={tab === name}
            aria-controls="action-panel"
            onClick={() => setTab(name)}
          >
            {label}
          </button>
        ))}
      </div>
      <div id="action-panel" role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'create' && <CreateBalance {...props} />}
        {tab === 'adjust' && <Adjust {...props} />}
        {tab === 'grant' && <AddGrant {...props} />}
        {tab === 'refill' && <AutoRefill {...props} />}
        {tab === 'limits' && <SpendLimits {...props} />}
        {tab === 'alerts' && <AccountAlerts {...props} />}
        {tab === 'features' && <AccountFeatures {...props} />}
        {tab === 'card' && <AttachCard {...props} />}
        {tab === 'midmonth' && <MidMonth {...props} />}
      </div>
    </section>
  );
}
