/**
 * Who is logged in, as the pages read it: the session context the shell (app.tsx) provides. A file of its
 * own so that the pages need not import the shell, which imports them.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { CompanySummary, Session } from './api';

export interface SessionState {
  session: Session | null;
  /** Ask the server who is logged in (after log-in, log-out or registering a company). */
  refresh: () => Promise<Session | null>;
}
export const SessionContext = createContext<SessionState>({ session: null, refresh: async () => null });
export const useSession = () => useContext(SessionContext);

export function useCompany(companyId: string): CompanySummary | undefined {
  return useSession().session?.companies.find((c) => c.company_id === companyId);
}
