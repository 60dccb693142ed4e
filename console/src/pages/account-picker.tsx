/**
 * An account chosen by name: the person types part of a name, an email or an id, the accounts that match are listed
 * as they type (GET /v1/accounts?q=, the API's search), and one is picked from the list. `resolveAccount` says which
 * account a form means when nothing was picked: an id typed whole, or the one account the text matches.
 */
import { useEffect, useState } from 'preact/hooks';
import { type Account, ApiError, api, ok } from '../api';
import { Field } from '../ui';

/** Matches listed at most. */
const SHOWN = 8;
/** Typing pauses this long before the search is asked. */
const PAUSE_MS = 250;

const search = async (q: string, limit: number) =>
  (await ok(api.GET('/v1/accounts', { params: { query: { q, limit } } }))).data;

/** An account's name for a person: its name, else its email, else its id. */
export const accountLabel = (a: Pick<Account, 'account_id' | 'name' | 'email'>) => a.name || a.email || a.account_id;

/**
 * The account a form means: the one picked, else an id typed whole (a_…; the API answers 404 if there is none),
 * else the only account the text matches. Otherwise an ApiError naming `account_id`, said in words.
 */
export async function resolveAccount(picked: Account | null, text: string): Promise<{ id: string; label: string }> {
  if (picked) return { id: picked.account_id, label: accountLabel(picked) };
  const t = text.trim();
  if (t === '') throw new ApiError(400, 'client', 'Choose an account: type part of its name.', 'account_id');
  if (/^a_[A-Za-z0-9_-]+$/.test(t)) return { id: t, label: t };
  const found = await search(t, 2);
  const only = found.length === 1 ? found[0] : undefined;
  if (only) return { id: only.account_id, label: accountLabel(only) };
  throw new ApiError(
    400,
    'client',
    found.length === 0 ? `No account matches “${t}”.` : `More than one account matches “${t}”: choose one in the list.`,
    'account_id',
  );
}

interface Props {
  text: string;
  onText: (text: string) => void;
  picked: Account | null;
  onPick: (a: Account | null) => void;
  error?: string | undefined;
}

/** The "Account" field and the accounts matching what it holds, each a button that picks it. */
export function AccountPicker({ text, onText, picked, onPick, error }: Props) {
  const [matches, setMatches] = useState<Account[] | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const q = text.trim();
  useEffect(() => {
    setFailed(null);
    if (picked || q === '') {
      setMatches(null);
      return;
    }
    let current = true;
    const timer = setTimeout(() => {
      search(q, SHOWN).then(
        (found) => {
          if (current) setMatches(found);
        },
        (err: unknown) => {
          if (current) setFailed(err instanceof ApiError ? err.message : String(err));
        },
      );
    }, PAUSE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [q, picked]);
  const status = failed
    ? failed
    : matches === null
      ? ''
      : matches.length === 0
        ? `No account matches “${q}”.`
        : `${matches.length}${matches.length === SHOWN ? ' or more' : ''} accounts match: choose one.`;
  return (
    <>
      <Field
        label="Account"
        name="account"
        type="search"
        autoComplete="off"
        value={text}
        onInput={(e) => {
          onPick(null);
          onText((e.target as HTMLInputElement).value);
        }}
        hint="Type part of its name, email or id, then choose it below."
        error={error}
      />
      {picked ? (
        <p class="account-chosen small" data-account-chosen={picked.account_id}>
          Chosen: <strong>{accountLabel(picked)}</strong> <code>{picked.account_id}</code>
        </p>
      ) : (
        matches &&
        matches.length > 0 && (
          <ul class="account-matches" data-account-matches>
            {matches.map((a) => (
              <li key={a.account_id}>
                <button
                  type="button"
                  class="account-match"
                  onClick={() => {
                    onPick(a);
                    onText(accountLabel(a));
                  }}
                >
                  <strong>{accountLabel(a)}</strong>
                  <span class="small muted">
                    {a.email && a.email !== accountLabel(a) ? ` ${a.email}` : ''} {a.account_id}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        )
      )}
      <p class="sr-only" role="status">
        {picked ? `Chosen: ${accountLabel(picked)}` : status}
      </p>
      {!picked && matches?.length === 0 && (
        <p class="small muted account-chosen" aria-hidden="true">
          {status}
        </p>
      )}
    </>
  );
}
