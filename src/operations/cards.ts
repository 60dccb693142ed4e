/**
 * Attaching a card. The processor is called outside any transaction: first the customer (only
 * when the account has no `processor_id`: it is created here, lazily, when the first card
 * arrives, under an idempotency key derived from the account so a retry finds the same
 * customer), then the card. Only when the processor accepted the card is anything written: the
 * card, the customer id, the decline streaks reset (unpausing auto-refill) and the charges that
 * waited for a card requested again, in one transaction.
 */
import { fail } from '../domain/outcome.js';
import type { ProcessorError } from '../processors/types.js';
import type { CardRow } from '../store/types.js';
import { collectChargesAwaitingCard } from './charges.js';
import { processorFor } from './secrets.js';
import type { Command, Deps } from './deps.js';

/** Expected processor failures as the reason codes of the error registry. */
export function failFromProcessor(e: ProcessorError, param?: string): never {
  switch (e.code) {
    case 'invalid_token':
      return fail('invalid_card_token', `the payment processor does not know this card token: ${e.message}`, param);
    case 'card_declined':
      return fail('card_declined', `the card was declined: ${e.message}`, param);
    case 'authentication_required':
      return fail('card_authentication_required', `the card needs the cardholder to authenticate: ${e.message}`, param);
    case 'processor_unavailable':
      return fail(
        'processor_unavailable',
        'the payment processor could not be reached; nothing was changed, try again',
        param,
      );
    case 'invalid_request':
      return fail('processor_rejected_request', `the payment processor refused the request: ${e.message}`, param);
  }
}

/** The card on file of one of the company's accounts; 404 when the account is not the company's or has none. */
export async function getCard(deps: Deps, companyId: string, accountId: string): Promise<CardRow> {
  const { account, card } = await deps.store.read(async (tx) => ({
    account: await tx.accounts.findAccount(companyId, accountId),
    card: await tx.cards.findCard(accountId),
  }));
  if (!account) fail('not_found', `no such account: ${accountId}`, 'account_id');
  if (!card) fail('not_found', 'this account has no card on file; attach one with POST /v1/accounts/{account_id}/card');
  return card;
}

export async function attachCard(
  deps: Deps,
  companyId: string,
  accountId: string,
  token: string,
): Promise<Command<CardRow>> {
  const { account, company } = await deps.store.read(async (tx) => ({
    account: await tx.accounts.findAccount(companyId, accountId),
    company: await tx.identity.findCompany(companyId),
  }));
  if (!account || !company) fail('not_found', `no such account: ${accountId}`, 'account_id');
  const processor = processorFor(deps, company);
  let customerId = account.processorId;
  if (customerId === null) {
    const created = await processor.createCustomer({
      name: account.name,
      email: account.email,
      metadata: { account_id: accountId },
      idempotencyKey: `customer:${accountId}`,
    });
    if (!created.ok) failFromProcessor(created.error);
    customerId = created.value.customerId;
  }
  const attached = await processor.attachCard({ customerId, token, idempotencyKey: `card:${accountId}:${token}` });
  if (!attached.ok) failFromProcessor(attached.error, 'token');
  const c = attached.value;
  const customer = customerId;
  return async (tx) => {
    const now = deps.clock.now();
    const current = await tx.accounts.findAccount(companyId, accountId);
    if (!current) fail('not_found', `no such account: ${accountId}`, 'account_id');
    if (current.processorId === null) await tx.accounts.updateAccount({ ...current, processorId: customer });
    else if (current.processorId !== customer) {
      // PUT /v1/accounts/{id} gave the account another customer while the processor attached
      // this card to the one read before: the card cannot pay for the account now.
      fail(
        'processor_customer_changed',
        "the account's processor_id changed while the card was being attached; attach the card again",
        'processor_id',
      );
    }
    const card: CardRow = {
      accountId,
      companyId,
      paymentMethodId: c.paymentMethodId,
      brand: c.brand,
      last4: c.last4,
      expMonth: c.expMonth,
      expYear: c.expYear,
      createdAtMs: now,
    };
    await tx.cards.upsertCard(card);
    const p = await deps.ledger.open(tx, await tx.balances.listBalances(accountId), now);
    for (const b of p.balances.values()) {
      if (b.consecutiveDeclines !== 0 || b.autoRefillPaused) {
        await tx.refills.updateRefillState(b.accountId, b.denomination, {
          consecutiveDeclines: 0,
          autoRefillPaused: false,
        });
      }
    }
    await collectChargesAwaitingCard(tx, now, accountId);
    return card;
  };
}
