/** Webhooks: subscribe (the signing secret shown once), list, delete, and each one's delivery log with retry. */
import { useState } from 'preact/hooks';
import { api, ok } from '../api';
import { units, when } from '../format';
import { usePoll } from '../hooks';
import { Alert, ConfirmButton, Empty, Field, List, SecretOnce, Select, Submit, formValues, useAction } from '../ui';

type WebhookType = 'balance_change' | 'negative_balance' | 'auto_refill' | 'threshold';
const TYPES: { value: WebhookType; label: string }[] = [
  { value: 'balance_change', label: 'Balance change: every change of a balance' },
  { value: 'negative_balance', label: 'Negative balance: available drops below 0' },
  { value: 'auto_refill', label: 'Auto-refill: a refill or plan renewal' },
  { value: 'threshold', label: 'Threshold: available drops below a number you choose' },
];

export function WebhooksPage({ companyId }: { companyId: string }) {
  const hooks = usePoll(
    async () => (await ok(api.GET('/v1/webhooks', { params: { query: { limit: 100 } } }))).data,
    [companyId],
  );
  const [open, setOpen] = useState<string | null>(null);
  const [type, setType] = useState<WebhookType>('balance_change');
  const [secret, setSecret] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const del = useAction();
  const submit = (e: Event) => {
    const v = formValues(e);
    const form = e.currentTarget as HTMLFormElement;
    void run(async () => {
      const r = await ok(
        api.POST('/v1/webhooks', {
          body: { type, url: v.url ?? '', ...(type === 'threshold' ? { threshold: Number(v.threshold) } : {}) },
        }),
      );
      form.reset();
      setSecret(r.data.secret);
      setOpen(r.data.webhook_id);
      await hooks.reload();
    });
  };
  const field = (name: string) => (error?.param === name ? error.message : undefined);
  return (
    <section>
      <h1 tabIndex={-1}>Webhooks</h1>
      <div class="grid-2">
        <section aria-labelledby="sub-h" class="panel">
          <h2 id="sub-h">Subscribe</h2>
          {secret ? (
            <SecretOnce title="Signing secret" what="signing secret" secret={secret} onDone={() => setSecret(null)} />
          ) : (
            <form onSubmit={submit}>
              <Select
                label="Notify on"
                name="type"
                value={type}
                onChange={(v) => setType(v as WebhookType)}
                options={TYPES}
              />
              <Field
                label="URL"
                name="url"
                type="url"
                required
                placeholder="https://example.com/billing-webhook"
                error={field('url')}
              />
              {type === 'threshold' && (
                <Field
                  label="Threshold (units)"
                  name="threshold"
                  type="number"
                  step={1}
                  required
                  error={field('threshold')}
                />
              )}
              {error && !['url', 'threshold'].includes(error.param ?? '') && <Alert error={error} />}
              <Submit busy={busy}>Subscribe</Submit>
            </form>
          )}
        </section>
        <section aria-labelledby="how-h" class="panel">
          <h2 id="how-h">How deliveries work</h2>
          <p class="small">
            Each notification is a POST signed as in Standard Webhooks (headers webhook-id, webhook-timestamp,
            webhook-signature; HMAC-SHA256 with the signing secret). Answer 2xx within 10 seconds; anything else is
            retried with backoff for at least 24 hours. Answering 410 Gone switches the subscription off.
          </p>
        </section>
      </div>
      <h2>Subscriptions</h2>
      <List
        items={hooks.data}
        error={hooks.error ?? del.error}
        what="webhooks"
        empty={<Empty title="No webhooks">Subscribe a URL above to hear about balance changes as they happen.</Empty>}
      >
        {(list) => (
          <ul class="hooks">
            {list.map((w) => (
              <li key={w.webhook_id} class="hook" data-webhook={w.webhook_id}>
                <div class="row">
                  <div>
                    <strong>{w.type}</strong>
                    {w.threshold !== null && <> below {units(w.threshold)}</>} → <code class="break">{w.url}</code>
                    <div class="small muted">
                      {w.webhook_id} · since {when(w.created_at)}
                      {w.disabled_at && (
                        <>
                          {' '}
                          · switched off {when(w.disabled_at)} ({w.disabled_reason})
                        </>
                      )}
                    </div>
                  </div>
                  <div class="actions">
                    <button
                      type="button"
                      class="secondary"
                      aria-expanded={open === w.webhook_id}
                      onClick={() => setOpen(open === w.webhook_id ? null : w.webhook_id)}
                    >
                      {open === w.webhook_id ? 'Hide deliveries' : 'Deliveries'}
                    </button>
                    <ConfirmButton
                      label="Delete"
                      question="Delete this webhook? Nothing more is sent to it."
                      confirm="Yes, delete"
                      onConfirm={() =>
                        void del.run(async () => {
                          await ok(
                            api.DELETE('/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: w.webhook_id } } }),
                          );
                          if (open === w.webhook_id) setOpen(null);
                          await hooks.reload();
                        })
                      }
                    />
                  </div>
                </div>
                {open === w.webhook_id && <Deliveries webhookId={w.webhook_id} />}
              </li>
            ))}
          </ul>
        )}
      </List>
    </section>
  );
}

function Deliveries({ webhookId }: { webhookId: string }) {
  const log = usePoll(
    async () =>
      (
        await ok(
          api.GET('/v1/webhooks/{webhook_id}/deliveries', {
            params: { path: { webhook_id: webhookId }, query: { limit: 25 } },
          }),
        )
      ).data,
    [webhookId],
  );
  const { busy, error, run } = useAction();
  const retry = (id: string) =>
    void run(async () => {
      await ok(
        api.POST('/v1/webhooks/deliveries/{callback_id}/retry', { params: { path: { callback_id: id } }, body: {} }),
      );
      await log.reload();
    });
  return (
    <section class="deliveries" aria-label="Delivery log">
      <List
        items={log.data}
        error={log.error ?? error}
        what="deliveries"
        empty={<p class="muted">Nothing sent yet. Notifications appear here within a second of being sent.</p>}
      >
        {(deliveries) => (
          <div class="table-wrap">
            <table data-table="deliveries">
              <caption class="sr-only">Notifications and their attempts, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts (time, response, latency)</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {deliveries.map((d) => (
                  <tr key={d.callback_id} data-callback={d.callback_id}>
                    <td>
                      {when(d.created_at)}
                      <div class="small muted">
                        <code>{d.callback_id}</code>
                      </div>
                    </td>
                    <td>
                      <span class={`state state-${d.status}`}>{d.status}</span>
                      {d.next_attempt_at && d.status === 'pending' && (
                        <div class="small">next {when(d.next_attempt_at)}</div>
                      )}
                    </td>
                    <td>
                      <ol class="attempts" data-attempts={d.attempts.length}>
                        {d.attempts.map((a) => (
                          <li key={a.attempted_at}>
                            {when(a.attempted_at)}: {a.status_code ?? a.error ?? 'no answer'}
                            {a.success ? ' ok' : ' failed'}, {a.latency_ms} ms{a.manual ? ' (retry)' : ''}
                          </li>
                        ))}
                      </ol>
                    </td>
                    <td>
                      <button type="button" class="secondary" disabled={busy} onClick={() => retry(d.callback_id)}>
                        Retry now
                      </button>
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
