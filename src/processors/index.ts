/**
 * Chooses each company's payment processor. Stripe clients are kept per API key so their
 * keep-alive connections are reused across charges; the sandbox has no state to keep.
 */
import { createSandboxProcessor } from './sandbox.js';
import { createStripeProcessor, createUnconfiguredStripeProcessor, type StripeConnectionOptions } from './stripe.js';
import type { PaymentProcessor, ProcessorFactory } from './types.js';

export type * from './types.js';
export type { StripeConnectionOptions } from './stripe.js';

export interface ProcessorFactoryOptions {
  /** Where Stripe clients connect; tests point this at the local fake Stripe. */
  stripe?: StripeConnectionOptions;
}

export function processorFactory(options: ProcessorFactoryOptions = {}): ProcessorFactory {
  const sandbox = createSandboxProcessor();
  const stripeByApiKey = new Map<string, PaymentProcessor>();
  return (company) => {
    if (company.processor === 'sandbox') return sandbox;
    const apiKey = company.processorApiKey;
    if (!apiKey) return createUnconfiguredStripeProcessor();
    let stripe = stripeByApiKey.get(apiKey);
    if (!stripe) {
      stripe = createStripeProcessor(apiKey, options.stripe);
      stripeByApiKey.set(apiKey, stripe);
    }
    return stripe;
  };
}
