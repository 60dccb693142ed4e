/**
 * Cards: the payment card on file of an account (at most one), which charges are made to and
 * whose attachment resumes paused refills.
 */

export interface CardRow {
  accountId: string;
  companyId: string;
  paymentMethodId: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  createdAtMs: number;
}

export interface CardsReadTx {
  findCard(accountId: string): Promise<CardRow | undefined>;
}

export interface CardsTx extends CardsReadTx {
  upsertCard(row: CardRow): Promise<void>;
  /** Forgets the account's card (it belonged to a processor customer the account no longer has). */
  deleteCard(accountId: string): Promise<void>;
}
