/**
 * `billing key create|list|revoke`: a company's API keys, through the operations behind
 * `/v1/companies/{id}/api_keys`. Only `create` prints a secret, once; `list` shows prefixes.
 */
import { presentApiKey } from '../http/schemas/identity.js';
import { createApiKey, findCompany, listApiKeys, revokeApiKey } from '../operations/identity.js';
import type { Deps } from '../operations/deps.js';
import { KEY_USAGE } from './usage.js';
import {
  type Io,
  CliError,
  EXIT_OK,
  JSON_OPTION,
  UsageError,
  parseCommand,
  required,
  table,
  withStore,
} from './common.js';

const KEY_HELP = `Usage: ${KEY_USAGE.split('\n').join('\n       ')}

create: a new API key for the company, shown only now (stored only as a hash).
list:   the company's keys with their prefixes, creation and revocation times (no secrets).
revoke: the key stops working at once on this database; servers that checked it recently keep
        accepting it for at most BILLING_API_KEY_CACHE_MS (5 s by default).`;

async function companyMustExist(deps: Deps, companyId: string): Promise<void> {
  if (!(await findCompany(deps, companyId))) throw new CliError(`no company ${companyId}`);
}

export async function keyCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') {
    io.out(KEY_HELP);
    return EXIT_OK;
  }
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke')
    throw new UsageError(sub === undefined ? 'missing subcommand' : `unknown subcommand "key ${sub}"`, KEY_USAGE);
  const p = parseCommand(
    rest,
    {
      company: { type: 'string' },
      ...(sub === 'revoke' ? { 'key-id': { type: 'string' } } : JSON_OPTION),
    },
    KEY_USAGE,
  );
  if (p.help) {
    io.out(KEY_HELP);
    return EXIT_OK;
  }
  const companyId = required(p.values, 'company', KEY_USAGE);
  const keyId = sub === 'revoke' ? required(p.values, 'key-id', KEY_USAGE) : '';
  return withStore(io, async ({ deps }) => {
    await companyMustExist(deps, companyId);
    if (sub === 'create') {
      const key = await deps.store.write(await createApiKey(deps, companyId));
      if (p.json) io.out(JSON.stringify({ key_id: key.row.keyId, api_key: key.secret }));
      else {
        io.out(`key_id   ${key.row.keyId}`);
        io.out(`api_key  ${key.secret}`);
        io.err('The API key is shown only now (it is stored only as a hash): keep it somewhere safe.');
      }
    } else if (sub === 'list') {
      const keys = (await listApiKeys(deps, companyId)).map(presentApiKey);
      if (p.json) io.out(JSON.stringify(keys));
      else
        for (const line of table(
          ['key_id', 'prefix', 'created_at', 'last_used_at', 'revoked_at'],
          keys.map((k) => [k.key_id, `${k.prefix}…`, k.created_at, k.last_used_at ?? 'never', k.revoked_at ?? '-']),
        ))
          io.out(line);
    } else {
      // Servers forget it within their key cache's TTL.
      await deps.store.write(await revokeApiKey(deps, companyId, keyId));
      io.out(`key ${keyId} revoked`);
    }
    return EXIT_OK;
  });
}
