/**
 * The account page's "Open the customer portal": a portal session of the account for the person looking (it can
 * read and buy credit packs, for the default hour), whose url opens in a new tab without a way back to this page
 * (noopener). The url carries the session's token: it is shown only here, as a link in case the browser blocked
 * the new tab.
 */
import { useState } from 'preact/hooks';
import { type Account, api, ok } from '../../api';
import { when } from '../../format';
import { Alert, Notice, useAction } from '../../ui';

export function OpenPortal({ account }: { account: Account }) {
  const { busy, error, run } = useAction();
  const [opened, setOpened] = useState<{ url: string; expiresAt: string } | null>(null);
  const open = () =>
    void run(async () => {
      setOpened(null);
      const r = await ok(
        api.POST('/v1/accounts/{account_id}/portal_sessions', {
          params: { path: { account_id: account.account_id } },
          body: { scopes: ['read', 'topup'] },
        }),
      );
      window.open(r.data.url, '_blank', 'noopener');
      setOpened({ url: r.data.url, expiresAt: r.data.expires_at });
    });
  return (
    <div class="portal-open">
      <button type="button" class="secondary" onClick={open} disabled={busy} aria-busy={busy ? 'true' : undefined}>
        {busy ? 'Opening…' : 'Open the customer portal'}
      </button>
      <Alert error={error} />
      {opened && (
        <Notice>
          The customer portal opened in a new tab, as this account's customer sees it (credit packs too), until{' '}
          {when(opened.expiresAt)}. No new tab?{' '}
          <a href={opened.url} target="_blank" rel="noopener noreferrer">
            Open the portal
          </a>
          .
        </Notice>
      )}
    </div>
  );
}
