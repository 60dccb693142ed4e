/**
 * What the credit-grants HTTP tests share: the records as the API answers them, typed from the OpenAPI document
 * through the client's generated types (one definition, the server's own).
 */
import type { Grant, Transaction } from '../../sdk/typescript/src/index.js';

export type GrantJson = Grant;
export type TxJson = Transaction;
