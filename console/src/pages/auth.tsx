/** Sign up, log in, verify the email address, forgot and reset the password. */
import { useEffect, useState } from 'preact/hooks';
import { type ApiError, api, ok, sessions, setCsrfToken } from '../api';
import { useSession } from '../session';
import { navigate } from '../hooks';
import { Alert, Field, Notice, Submit, formValues, useAction } from '../ui';

const fieldError = (err: { param?: string | undefined; message: string } | null, name: string) =>
  err?.param === name ? err.message : undefined;

export function LoginPage({ next }: { next: string }) {
  const { refresh } = useSession();
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    const v = formValues(e);
    void run(async () => {
      const s = await sessions.create(v.email ?? '', v.password ?? '');
      setCsrfToken(s.data.csrf_token);
      await refresh();
      navigate(next.startsWith('/') && next !== '/login' ? next : '/', true);
    });
  };
  return (
    <section class="card">
      <h1 tabIndex={-1}>Log in</h1>
      <form onSubmit={submit} noValidate={false}>
        <Field label="Email" name="email" type="email" autoComplete="username" required />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required />
        <Alert
          error={
            error?.status === 401 ? 'The email or the password is wrong. Check both and try again.' : error?.message
          }
        />
        <Submit busy={busy}>Log in</Submit>
      </form>
      <p>
        <a href="/forgot-password">Forgot your password?</a> · New here? <a href="/signup">Create an account</a>
      </p>
    </section>
  );
}

export function SignupPage() {
  const { refresh } = useSession();
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    const v = formValues(e);
    void run(async () => {
      await ok(
        api.POST('/v1/users', { body: { name: v.name ?? '', email: v.email ?? '', password: v.password ?? '' } }),
      );
      const s = await sessions.create(v.email ?? '', v.password ?? '');
      setCsrfToken(s.data.csrf_token);
      await refresh();
      navigate('/companies/new', true);
    });
  };
  const dup = error?.status === 409 ? 'An account with this email already exists. Log in instead.' : undefined;
  return (
    <section class="card">
      <h1 tabIndex={-1}>Create your account</h1>
      <form onSubmit={submit} noValidate>
        <Field label="Full name" name="name" autoComplete="name" required error={fieldError(error, 'name')} />
        <Field
          label="Email"
          name="email"
          type="email"
          autoComplete="email"
          required
          error={dup ?? fieldError(error, 'email')}
        />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          required
          minLength={8}
          hint="At least 8 characters."
          error={fieldError(error, 'password')}
        />
        {error && !dup && !['name', 'email', 'password'].includes(error.param ?? '') && <Alert error={error} />}
        <Submit busy={busy}>Create account</Submit>
      </form>
      <p>
        Already have an account? <a href="/login">Log in</a>
      </p>
    </section>
  );
}

export function VerifyPage({ token }: { token: string }) {
  const { session, refresh } = useSession();
  const [state, setState] = useState<'working' | 'done' | 'failed'>('working');
  const [message, setMessage] = useState('');
  useEffect(() => {
    if (!token) {
      setState('failed');
      setMessage('This link has no token. Open the link from the email exactly as it was sent.');
      return;
    }
    sessions.verifyEmail(token).then(
      () => {
        setState('done');
        void refresh();
      },
      (err: ApiError) => {
        setState('failed');
        const what =
          err.param === 'token' ? 'This verification link is invalid, expired or already used.' : err.message;
        setMessage(`${what} Log in and ask for a new link.`);
      },
    );
  }, [token, refresh]);
  return (
    <section class="card">
      <h1 tabIndex={-1}>Verify your email</h1>
      {state === 'working' && <p aria-busy="true">Checking your link…</p>}
      {state === 'done' && (
        <Notice>
          Your email address is verified. <a href="/">{session ? 'Continue to the console' : 'Log in'}</a>
        </Notice>
      )}
      {state === 'failed' && <Alert error={message} />}
    </section>
  );
}

export function ForgotPage() {
  const { busy, error, run } = useAction();
  const [sent, setSent] = useState(false);
  const submit = (e: Event) => {
    const v = formValues(e);
    void run(async () => {
      await sessions.requestReset(v.email ?? '');
      setSent(true);
    });
  };
  return (
    <section class="card">
      <h1 tabIndex={-1}>Reset your password</h1>
      {sent ? (
        <Notice>
          If an account uses that email, a link to choose a new password is on its way. The link works once, for an
          hour.
        </Notice>
      ) : (
        <form onSubmit={submit}>
          <Field label="Email" name="email" type="email" autoComplete="email" required />
          <Alert error={error} />
          <Submit busy={busy}>Send the link</Submit>
        </form>
      )}
      <p>
        <a href="/login">Back to log in</a>
      </p>
    </section>
  );
}

export function ResetPage({ token }: { token: string }) {
  const { busy, error, run } = useAction();
  const [done, setDone] = useState(false);
  const submit = (e: Event) => {
    const v = formValues(e);
    void run(async () => {
      await sessions.completeReset(token, v.password ?? '');
      setDone(true);
    });
  };
  const tokenProblem =
    error?.param === 'token'
      ? 'This reset link is invalid, expired (links last an hour) or already used. Ask for a new one.'
      : undefined;
  return (
    <section class="card">
      <h1 tabIndex={-1}>Choose a new password</h1>
      {done ? (
        <Notice>
          Your password is changed, and every session was logged out. <a href="/login">Log in</a>
        </Notice>
      ) : (
        <form onSubmit={submit} noValidate>
          <Field
            label="New password"
            name="password"
            type="password"
            autoComplete="new-password"
            required
            minLength={8}
            hint="At least 8 characters."
            error={fieldError(error, 'password')}
          />
          {tokenProblem && (
            <Alert error={tokenProblem}>
              {' '}
              <a href="/forgot-password">Send a new link</a>
            </Alert>
          )}
          {error && !tokenProblem && error.param !== 'password' && <Alert error={error} />}
          <Submit busy={busy}>Save the new password</Submit>
        </form>
      )}
    </section>
  );
}

/** Shown on every page until the address is verified. */
export function VerifyBanner() {
  const { session } = useSession();
  const { busy, error, run } = useAction();
  const [sent, setSent] = useState(false);
  if (!session || session.user.emailVerified) return null;
  return (
    <div class="banner" role="status">
      Verify your email address: we sent a link to <strong>{session.user.email}</strong>.{' '}
      {sent ? (
        'A new link is on its way.'
      ) : (
        <button
          type="button"
          class="link"
          disabled={busy}
          onClick={() =>
            void run(async () => {
              await sessions.resendVerification(session.user.id);
              setSent(true);
            })
          }
        >
          Send it again
        </button>
      )}
      {error && <span class="field-error"> {error.message}</span>}
    </div>
  );
}
