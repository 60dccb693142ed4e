/** What the account page's action forms share: their props, the balance picker, numbers from fields. */
import type { Account } from '../../api';
import { Select } from '../../ui';

export type ActionProps = { companyId: string; account: Account; onChange: () => Promise<void> };

/** A whole number from a form field; undefined when left empty. */
export const int = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : Number(v));

export function DenominationSelect(props: { account: Account; value: string; onChange: (v: string) => void }) {
  return (
    <Select
      label="Balance"
      name="denomination"
      value={props.value}
      onChange={props.onChange}
      options={props.account.balances.map((b) => ({ value: b.denomination, label: b.denomination }))}
    />
  );
}

export function NeedsBalance({ account }: { account: Account }) {
  return account.balances.length === 0 ? <p class="muted">Create a balance first.</p> : null;
}
