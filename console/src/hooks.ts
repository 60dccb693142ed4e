/** Live data: polling while the tab is visible, and a small router on the History API. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

/** How often an open page asks again: changes made through the API show within 2 seconds. */
export const POLL_MS = 1000;

export interface Polled<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  /** Load again now, after the load under way if any (so that it sees a change just made). */
  reload: () => Promise<void>;
}

/**
 * The console's one data hook. Loads `fn` at once and again every POLL_MS while the tab is visible (a hidden
 * tab asks nothing and catches up the moment it is shown). A load never overlaps the previous one: a tick
 * that finds one under way is skipped. `key` restarts it. `fn` gets what it returned last time, so that it
 * can ask only for what changed (the account page), and `partial` to show a long first load as it arrives.
 */
export function usePoll<T>(
  fn: (previous: T | undefined, partial: (data: T) => void) => Promise<T>,
  key: unknown[],
  live = true,
): Polled<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const dataRef = useRef<T | undefined>(undefined);
  const generation = useRef(0);
  const busy = useRef<Promise<void> | null>(null);

  const run = useCallback(async () => {
    if (busy.current) return busy.current;
    const gen = generation.current;
    const p = (async () => {
      try {
        // A long first load can show what it has so far (`partial`) before it is complete.
        const partial = (d: T) => {
          if (gen !== generation.current) return;
          dataRef.current = d;
          setData(d);
          setLoading(false);
        };
        const next = await fnRef.current(dataRef.current, partial);
        if (gen !== generation.current) return;
        dataRef.current = next;
        setData(next);
        setError(null);
      } catch (err) {
        if (gen !== generation.current) return;
        setError(err instanceof ApiError ? err : new ApiError(0, 'client', String(err)));
      } finally {
        if (gen === generation.current) setLoading(false);
      }
    })();
    busy.current = p;
    try {
      await p;
    } finally {
      // Only its own: after a restart (`key`) another load may be under way already.
      if (busy.current === p) busy.current = null;
    }
  }, []);

  const reload = useCallback(async () => {
    // A load under way may have read before the change that asks for this one: wait for it, then load again.
    if (busy.current) await busy.current;
    await run();
  }, [run]);

  useEffect(() => {
    generation.current++;
    busy.current = null;
    dataRef.current = undefined;
    setData(undefined);
    setLoading(true);
    void run();
    if (!live) return;
    const tick = () => {
      if (document.visibilityState === 'visible') void run();
    };
    const timer = setInterval(tick, POLL_MS);
    document.addEventListener('visibilitychange', tick);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', tick);
    };
  }, key);

  return { data, error, loading, reload };
}

// --- routing

const listeners = new Set<() => void>();
export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const l of listeners) l();
}

/** Calls `fn` whenever the address changes (a link, navigate(), back or forward), before the pages render it. */
export function onLocationChange(fn: () => void): void {
  listeners.add(fn);
  window.addEventListener('popstate', fn);
}

export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((n) => n + 1);
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** Same-origin links navigate without a reload (modifier keys and new tabs keep the browser's behaviour). */
export function interceptLinks(): void {
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest('a');
    if (!a || a.target || a.hasAttribute('download') || a.origin !== location.origin) return;
    e.preventDefault();
    navigate(a.pathname + a.search);
  });
}
