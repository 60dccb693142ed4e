/**
 * `billing company create`: a company owned by an existing user, through the same operation as
 * `POST /v1/companies`; prints the company id and its first API key (the only time the key is shown).
 * With this and `billing user create`, a private deployment needs no open sign-up.
 */
import { Value } from '@sinclair/typebox/value';
import { TEXT_LENGTH_MAX, Text } from '../http/schemas/common.js';
import { createCompany, normalizeEmail } from '../operations/identity.js';
import { COMPANY_USAGE } from './usage.js';
import { type Io, CliError, EXIT_OK, JSON_OPTION, UsageError, parseCommand, required, withStore } from './common.js';

const COMPANY_HELP = `Usage: ${COMPANY_USAGE}

Creates a company owned by the user with that email (billing user create makes one) and prints the
company id and an API key. The key is shown only now and stored only as a hash: keep it.
The processor is sandbox unless --processor stripe, which needs a restricted Stripe key: give it with
--processor-api-key or, so that it stays out of the process list, in BILLING_PROCESSOR_API_KEY.`;

const PROCESSORS = ['sandbox', 'stripe'] as const;

export async function companyCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') {
    io.out(COMPANY_HELP);
    return EXIT_OK;
  }
  if (sub !== 'create')
    throw new UsageError(
      sub === undefined ? 'missing subcommand' : `unknown subcommand "company ${sub}"`,
      COMPANY_USAGE,
    );
  const p = parseCommand(
    rest,
    {
      'owner-email': { type: 'string' },
      name: { type: 'string' },
      processor: { type: 'string' },
      'processor-api-key': { type: 'string' },
      ...JSON_OPTION,
    },
    COMPANY_USAGE,
  );
  if (p.help) {
    io.out(COMPANY_HELP);
    return EXIT_OK;
  }
  const ownerEmail = required(p.values, 'owner-email', COMPANY_USAGE);
  const name = required(p.values, 'name', COMPANY_USAGE);
  if (!Value.Check(Text(), name))
    throw new UsageError(`--name must be 1 to ${TEXT_LENGTH_MAX} characters`, COMPANY_USAGE);
  const processor = (p.values.processor ?? 'sandbox') as string;
  if (!(PROCESSORS as readonly string[]).includes(processor))
    throw new UsageError(`--processor must be sandbox or stripe, got "${processor}"`, COMPANY_USAGE);
  const flagKey = p.values['processor-api-key'];
  const envKey = io.env.BILLING_PROCESSOR_API_KEY;
  const apiKey = typeof flagKey === 'string' ? flagKey : processor === 'stripe' && envKey !== '' ? envKey : undefined;
  return withStore(io, async ({ deps }) => {
    const owner = await deps.store.read((tx) => tx.identity.findUserByEmail(normalizeEmail(ownerEmail)));
    if (!owner) throw new CliError(`no user with the email ${ownerEmail} (billing user create makes one)`);
    // The operation checks the processor and its key exactly as POST /v1/companies does.
    const { company, apiKey: secret } = await deps.store.write(
      await createCompany(deps, owner, {
        name,
        processor: processor as (typeof PROCESSORS)[number],
        ...(apiKey !== undefined ? { processor_api_key: apiKey } : {}),
      }),
    );
    if (p.json)
      io.out(
        JSON.stringify({
          company_id: company.companyId,
          name: company.name,
          processor: company.processor,
          api_key: secret,
        }),
      );
    else {
      io.out(`company_id  ${company.companyId}`);
      io.out(`api_key     ${secret}`);
      io.err('The API key is shown only now (it is stored only as a hash): keep it somewhere safe.');
    }
    return EXIT_OK;
  });
}
