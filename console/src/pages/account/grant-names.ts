/**
 * What a grant is called on the pages: its name, else what made it. Its own module because the account page's
 * panels, its loaders (the transactions' grant labels) and the company's grants page all say it the same way.
 */
import type { Grant } from '../../api';
import { shortId } from '../../format';

/** What made a grant, in words: for a grant without a name. */
const SOURCES: Record<Grant['source'], string> = {
  grant: 'Unnamed grant',
  initial: 'Initial grant',
  adjustment: 'Adjustment',
  refill: 'Refill',
  monthly_refill: 'Monthly refill',
  plan: 'Plan period',
  proration: 'Mid-month increase',
  topup: 'Credit pack',
};
/** A grant's name, else what made it. */
export const grantName = (g: Grant): string => g.name ?? SOURCES[g.source];
/** A grant in a few words, to tell it apart in a transaction: its name, else what made it and its short id. */
export const grantLabel = (g: Grant): string => g.name ?? `${SOURCES[g.source]} ${shortId(g.grant_id)}`;
