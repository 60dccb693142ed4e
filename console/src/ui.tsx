/** Small building blocks shared by the pages: fields with their messages, alerts, lists, secrets shown once. */
import type { ComponentChildren, InputHTMLAttributes, LooseInputHTMLAttributes } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from './api';

let ids = 0;
const useId = (prefix: string) => useRef(`${prefix}-${++ids}`).current;

type InputProps = LooseInputHTMLAttributes<HTMLInputElement> & { name: string; value?: string | number };

/** A labelled input with its hint and its error (announced, and linked with aria-describedby). */
export function Field(props: { label: string; hint?: string; error?: string | null | undefined } & InputProps) {
  const { label, hint, error, ...input } = props;
  const id = useId(`f-${props.name}`);
  const described = [hint ? `${id}-hint` : '', error ? `${id}-err` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={described}
        {...(input as unknown as InputHTMLAttributes<HTMLInputElement>)}
      />
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
      {error && (
        <small id={`${id}-err`} class="field-error">
          {error}
        </small>
      )}
    </div>
  );
}

export function Select(props: {
  label: string;
  name: string;
  value: string;
  options: { value: string; label: string }[];
  onChange: (v: string) => void;
  error?: string | null | undefined;
}) {
  const id = useId(`s-${props.name}`);
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        name={props.name}
        value={props.value}
        aria-describedby={props.error ? `${id}-err` : undefined}
        onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}
      >
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {props.error && (
        <small id={`${id}-err`} class="field-error">
          {props.error}
        </small>
      )}
    </div>
  );
}

export function Alert({ error, children }: { error?: ApiError | string | null; children?: ComponentChildren }) {
  const text = typeof error === 'string' ? error : error?.message;
  if (!text && !children) return null;
  return (
    <div class="alert" role="alert">
      {text}
      {children}
    </div>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <div class="notice" role="status">
      {children}
    </div>
  );
}

/** A secret shown once: copy button, warning, and gone for good once dismissed. */
export function SecretOnce(props: { title: string; secret: string; what: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const ref = useRef<HTMLElement>(null);
  useEffect(() => ref.current?.focus(), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied(true);
    } catch {
      const range = document.createRange();
      const el = ref.current?.querySelector('code');
      if (el) {
        range.selectNodeContents(el);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      }
    }
  };
  return (
    <section class="secret" ref={ref} tabIndex={-1} aria-label={props.title}>
      <h2>{props.title}</h2>
      <p class="warning">
        <strong>Copy it now.</strong> This {props.what} is shown only once: it is not stored in a form anyone can read
        back, and it will not be shown again.
      </p>
      <div class="secret-value">
        <code data-secret>{props.secret}</code>
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <span class="sr-only" role="status">
        {copied ? 'Copied to the clipboard' : ''}
      </span>
      <button type="button" class="secondary" onClick={props.onDone}>
        I have saved it
      </button>
    </section>
  );
}

/** A destructive button that asks first, in place. */
export function ConfirmButton(props: { label: string; question: string; confirm: string; onConfirm: () => void }) {
  const [asking, setAsking] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) yes.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <button type="button" class="danger-outline" onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  return (
    <span class="confirm">
      <span>{props.question}</span>
      <button
        type="button"
        class="danger"
        ref={yes}
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        {props.confirm}
      </button>
      <button type="button" class="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" aria-busy="true">
      Loading {what}…
    </p>
  );
}

/**
 * What every list of the console shows, in one place: the error if the last load failed (the items loaded
 * before stay), "Loading …" until the first answer, `empty` when there is nothing, else the items as
 * `children` draws them.
 */
export function List<T>(props: {
  items: T[] | undefined;
  error?: ApiError | string | null | undefined;
  /** Said while loading: "Loading {what}…". */
  what: string;
  empty: ComponentChildren;
  children: (items: T[]) => ComponentChildren;
}) {
  const { items } = props;
  return (
    <>
      <Alert error={props.error} />
      {items === undefined ? <Loading what={props.what} /> : items.length === 0 ? props.empty : props.children(items)}
    </>
  );
}

/** A submit button that says what it is doing. */
export function Submit({ busy, children }: { busy: boolean; children: ComponentChildren }) {
  return (
    <button type="submit" disabled={busy} aria-busy={busy ? 'true' : undefined}>
      {busy ? 'Working…' : children}
    </button>
  );
}

/** Runs an action with a busy flag and an error in words. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  async function run<T>(fn: () => Promise<T>): Promise<T | undefined> {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (err) {
      setError(err as ApiError);
      return undefined;
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, setError, run };
}

export const formValues = (e: Event): Record<string, string> => {
  e.preventDefault();
  const data = new FormData(e.currentTarget as HTMLFormElement);
  return Object.fromEntries([...data.entries()].map(([k, v]) => [k, String(v)]));
};
