/** The shell: who is logged in, which company is open, the navigation, and which page a path shows. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type Session, onUnauthorized, sessions, setCompany, setCsrfToken } from './api';
import { navigate, onLocationChange, useLocation } from './hooks';
import { AccountPage } from './pages/account';
import { AccountsPage } from './pages/accounts';
import { AlertsPage } from './pages/alerts';
import { FeaturesPage } from './pages/features';
import { ForgotPage, LoginPage, ResetPage, SignupPage, VerifyBanner, VerifyPage } from './pages/auth';
import { KeysPage, NewCompanyPage } from './pages/company';
import { CreditPacksPage } from './pages/credit-packs';
import { GrantsPage } from './pages/grants';
import { PlansPage } from './pages/plans';
import { UsagePage } from './pages/usage';
import { WebhooksPage } from './pages/webhooks';
import { SessionContext } from './session';

const PUBLIC = ['/login', '/signup', '/verify-email', '/forgot-password', '/reset-password'];

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const { path, query } = useLocation();

  const refresh = useCallback(async () => {
    try {
      const s = (await sessions.current()).data;
      setCsrfToken(s.csrf_token);
      setSession(s);
      return s;
    } catch {
      setCsrfToken(null);
      setSession(null);
      return null;
    }
  }, []);

  useEffect(() => {
    void refresh();
    return onUnauthorized(() => {
      setCsrfToken(null);
      setSession(null);
    });
  }, [refresh]);

  // Move focus to the page's heading on navigation, so that screen readers announce the new page.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    requestAnimationFrame(() => document.querySelector<HTMLElement>('main h1')?.focus());
  }, [path]);

  if (session === undefined)
    return (
      <main id="main" class="center">
        <p aria-busy="true">Loading…</p>
      </main>
    );

  const isPublic = PUBLIC.includes(path);
  let page: preact.JSX.Element;
  if (path === '/signup') page = <SignupPage />;
  else if (path === '/verify-email') page = <VerifyPage token={query.get('token') ?? ''} />;
  else if (path === '/forgot-password') page = <ForgotPage />;
  else if (path === '/reset-password') page = <ResetPage token={query.get('token') ?? ''} />;
  else if (path === '/login' || !session) page = <LoginPage next={isPublic ? '/' : path} />;
  else page = <Authed session={session} path={path} />;

  return (
    <SessionContext.Provider value={{ session, refresh }}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Header session={session} path={path} />
      <main id="main" class={session && !isPublic ? '' : 'narrow'}>
        {session && !isPublic && <VerifyBanner />}
        {page}
      </main>
    </SessionContext.Provider>
  );
}

const COMPANY_PATH = /^\/c\/(c_[A-Za-z0-9_-]+)(?:\/(.*))?$/;

// The company the requests name (Billing-Company) is the one in the address: set when the address changes,
// before the pages render and ask, never while rendering.
const followCompany = () => setCompany(COMPANY_PATH.exec(location.pathname)?.[1] ?? null);
followCompany();
onLocationChange(followCompany);

function Authed({ session, path }: { session: Session; path: string }) {
  const m = COMPANY_PATH.exec(path);
  const companyId = m?.[1];
  useEffect(() => {
    if (path === '/' || path === '') {
      const first = session.companies[0];
      navigate(first ? `/c/${first.company_id}/accounts` : '/companies/new', true);
    }
  }, [path, session]);
  if (path === '/companies/new') return <NewCompanyPage />;
  if (!companyId) return <p aria-busy="true">Opening…</p>;
  if (!session.companies.some((c) => c.company_id === companyId))
    return (
      <section>
        <h1 tabIndex={-1}>Company not found</h1>
        <p>
          There is no company {companyId} among yours. <a href="/">Go to your companies</a>.
        </p>
      </section>
    );
  const rest = m?.[2] ?? '';
  const account = /^accounts\/([^/]+)$/.exec(rest);
  if (account) return <AccountPage companyId={companyId} accountId={decodeURIComponent(account[1]!)} />;
  switch (rest) {
    case 'usage':
      return <UsagePage companyId={companyId} />;
    case 'grants':
      return <GrantsPage companyId={companyId} />;
    case 'alerts':
      return <AlertsPage companyId={companyId} />;
    case 'plans':
      return <PlansPage companyId={companyId} />;
    case 'features':
      return <FeaturesPage companyId={companyId} />;
    case 'credit-packs':
      return <CreditPacksPage companyId={companyId} />;
    case 'webhooks':
      return <WebhooksPage companyId={companyId} />;
    case 'keys':
      return <KeysPage companyId={companyId} />;
    default:
      return <AccountsPage companyId={companyId} />;
  }
}

const NAV = [
  ['accounts', 'Accounts'],
  ['usage', 'Usage'],
  ['grants', 'Grants'],
  ['alerts', 'Alerts'],
  ['plans', 'Plans & prices'],
  ['features', 'Features'],
  ['credit-packs', 'Credit packs'],
  ['webhooks', 'Webhooks'],
  ['keys', 'API keys'],
] as const;

function Header({ session, path }: { session: Session | null; path: string }) {
  const m = COMPANY_PATH.exec(path);
  const companyId = session?.companies.some((c) => c.company_id === m?.[1]) ? m?.[1] : undefined;
  const section = (m?.[2] ?? 'accounts').split('/')[0];
  const [error, setError] = useState<string | null>(null);
  const logOut = async () => {
    try {
      await sessions.revoke();
    } catch (err) {
      setError((err as Error).message);
    }
    setCsrfToken(null);
    location.assign('/login');
  };
  return (
    <header class="top">
      <a class="brand" href="/">
        Billing console
      </a>
      {session && (
        <>
          {session.companies.length > 0 && (
            <label class="company-switch">
              <span class="sr-only">Company</span>
              <select
                value={companyId ?? ''}
                onChange={(e) => {
                  const v = (e.target as HTMLSelectElement).value;
                  navigate(v === 'new' ? '/companies/new' : `/c/${v}/${section}`);
                }}
              >
                {!companyId && <option value="">Choose a company</option>}
                {session.companies.map((c) => (
                  <option key={c.company_id} value={c.company_id}>
                    {c.name}
                  </option>
                ))}
                <option value="new">+ Register a company</option>
              </select>
            </label>
          )}
          {companyId && (
            <nav aria-label="Sections">
              {NAV.map(([slug, label]) => (
                <a key={slug} href={`/c/${companyId}/${slug}`} aria-current={section === slug ? 'page' : undefined}>
                  {label}
                </a>
              ))}
            </nav>
          )}
          <div class="who">
            <span class="muted">{session.user.email}</span>
            <button type="button" class="secondary" onClick={logOut}>
              Log out
            </button>
          </div>
          {error && <span role="alert">{error}</span>}
        </>
      )}
    </header>
  );
}
