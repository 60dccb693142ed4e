/** Registering a company (its first API key shown once) and the company's API keys. */
import { useState } from 'preact/hooks';
import { api, ok } from '../api';
import { useSession } from '../session';
import { when } from '../format';
import { navigate, usePoll } from '../hooks';
import { Alert, ConfirmButton, Empty, Field, List, SecretOnce, Select, Submit, formValues, useAction } from '../ui';

export function NewCompanyPage() {
  const { refresh } = useSession();
  const { busy, error, run } = useAction();
  const [processor, setProcessor] = useState('sandbox');
  const [created, setCreated] = useState<{ company_id: string; api_key: string; name: string } | null>(null);
  const submit = (e: Event) => {
    const v = formValues(e);
    const form = e.currentTarget as HTMLFormElement;
    void run(async () => {
      const body =
        processor === 'stripe'
          ? { name: v.name ?? '', processor: 'stripe' as const, processor_api_key: v.processor_api_key ?? '' }
          : { name: v.name ?? '', processor: 'sandbox' as const };
      const r = await ok(api.POST('/v1/companies', { body }));
      form.reset(); // the Stripe key leaves the page with the form
      setCreated({ company_id: r.data.company_id, api_key: r.data.api_key, name: r.data.name });
      await refresh();
    });
  };
  if (created)
    return (
      <section>
        <h1 tabIndex={-1}>{created.name} is registered</h1>
        <p>
          Company id: <code>{created.company_id}</code>. Your code authenticates with HTTP Basic auth: the company id as
          the user name and this API key as the password.
        </p>
        <SecretOnce
          title="Your first API key"
          what="API key"
          secret={created.api_key}
          onDone={() => navigate(`/c/${created.company_id}/accounts`)}
        />
      </section>
    );
  return (
    <section class="card">
      <h1 tabIndex={-1}>Register a company</h1>
      <p class="muted">A company holds the accounts you bill, their balances and prices, and its API keys.</p>
      <form onSubmit={submit}>
        <Field label="Company name" name="name" required error={error?.param === 'name' ? error.message : undefined} />
        <Select
          label="Payment processor"
          name="processor"
          value={processor}
          onChange={setProcessor}
          options={[
            { value: 'sandbox', label: 'Sandbox (test cards, no real money)' },
            { value: 'stripe', label: 'Stripe' },
          ]}
        />
        {processor === 'stripe' && (
          <Field
            label="Stripe restricted key"
            name="processor_api_key"
            type="password"
            autoComplete="off"
            required
            hint={
              'rk_live_… or rk_test_… with write access to customers, payment intents and payment methods. ' +
              'It is stored for charging and never shown again.'
            }
            error={error?.param === 'processor_api_key' ? error.message : undefined}
          />
        )}
        {error && !['name', 'processor_api_key'].includes(error.param ?? '') && <Alert error={error} />}
        <Submit busy={busy}>Register company</Submit>
      </form>
    </section>
  );
}

export function KeysPage({ companyId }: { companyId: string }) {
  const keys = usePoll(
    async () =>
      (await ok(api.GET('/v1/companies/{company_id}/api_keys', { params: { path: { company_id: companyId } } }))).data,
    [companyId],
  );
  const { busy, error, run } = useAction();
  const [secret, setSecret] = useState<string | null>(null);
  const create = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const r = await ok(
        api.POST('/v1/companies/{company_id}/api_keys', { params: { path: { company_id: companyId } } }),
      );
      setSecret(r.data.api_key);
      await keys.reload();
    });
  };
  const revoke = (keyId: string) =>
    void run(async () => {
      await ok(
        api.DELETE('/v1/companies/{company_id}/api_keys/{key_id}', {
          params: { path: { company_id: companyId, key_id: keyId } },
        }),
      );
      await keys.reload();
    });
  return (
    <section>
      <h1 tabIndex={-1}>API keys</h1>
      <p class="muted">
        Your servers call the API with HTTP Basic auth: user name <code>{companyId}</code>, password an API key. A
        revoked key stops working at once.
      </p>
      {secret ? (
        <SecretOnce title="New API key" what="API key" secret={secret} onDone={() => setSecret(null)} />
      ) : (
        <form onSubmit={create} class="inline">
          <Submit busy={busy}>Create an API key</Submit>
        </form>
      )}
      <List
        items={keys.data}
        error={error ?? keys.error}
        what="API keys"
        empty={<Empty title="No API keys">Create one above.</Empty>}
      >
        {(list) => (
          <div class="table-wrap">
            <table>
              <caption class="sr-only">API keys</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((k) => (
                  <tr key={k.key_id}>
                    <td>
                      <code>{k.prefix}…</code>
                    </td>
                    <td>{when(k.created_at)}</td>
                    {/* Recorded at most once a minute per key: right to within a minute. */}
                    {k.last_used_at ? <td>{when(k.last_used_at)}</td> : <td class="muted">never</td>}
                    <td>{k.revoked_at ? `Revoked ${when(k.revoked_at)}` : 'Active'}</td>
                    <td>
                      {!k.revoked_at && (
                        <ConfirmButton
                          label="Revoke"
                          question={`Revoke ${k.prefix}…? Code using it stops working at once.`}
                          confirm="Yes, revoke"
                          onConfirm={() => revoke(k.key_id)}
                        />
                      )}
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
