/**
 * The environment a test's child process (the CLI, a server) starts with: only what a process needs, so that the
 * tests' own settings never leak into it, and the clock of the test process. A run under libfaketime (`faketime`:
 * LD_PRELOAD and FAKETIME*) gives its children the same faked instant, so that a suite run "at 00:10 UTC" or "on
 * the last day of a month" runs its servers and CLI commands then too.
 */
const PASSED = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'LD_PRELOAD'];

export function childEnv(env: Record<string, string | undefined> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(process.env))
    if (v !== undefined && (PASSED.includes(name) || name.startsWith('FAKETIME'))) out[name] = v;
  for (const [name, v] of Object.entries(env)) if (v !== undefined) out[name] = v;
  return out;
}
