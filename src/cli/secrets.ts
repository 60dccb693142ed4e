/**
 * `billing secrets rotate|new-key`: the keys of the secrets stored at rest (webhook signing secrets,
 * processor keys; see src/secret-keys.ts and docs/OPERATIONS.md).
 */
import { newSecretKeyText } from '../lib/secret-box.js';
import { describeReseal, resealSecrets } from '../operations/secrets.js';
import { secretKeyFileOf } from '../secret-keys.js';
import { type Io, EXIT_OK, JSON_OPTION, UsageError, parseCommand, withStore } from './common.js';
import { SECRETS_USAGE } from './usage.js';

const SECRETS_HELP = `Usage: ${SECRETS_USAGE.split('\n').join('\n       ')}

rotate:  re-encrypts every stored secret with the current key (the first of BILLING_SECRET_KEY, or
         of the SQLite key file), opening each with whichever configured key sealed it. Safe while
         servers run and to run twice. Afterwards the older keys may be removed.
new-key: prints a new random key as id:base64, to put first in BILLING_SECRET_KEY (or the key file),
         keeping the current one after it until \`billing secrets rotate\` has run.`;

export async function secretsCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') {
    io.out(SECRETS_HELP);
    return EXIT_OK;
  }
  if (sub !== 'rotate' && sub !== 'new-key')
    throw new UsageError(
      sub === undefined ? 'missing subcommand' : `unknown subcommand "secrets ${sub}"`,
      SECRETS_USAGE,
    );
  const p = parseCommand(rest, sub === 'rotate' ? JSON_OPTION : {}, SECRETS_USAGE);
  if (p.help) {
    io.out(SECRETS_HELP);
    return EXIT_OK;
  }
  if (sub === 'new-key') {
    io.out(newSecretKeyText());
    return EXIT_OK;
  }
  return withStore(io, async ({ config, deps }) => {
    const keyId = deps.secrets.currentKeyId;
    const report = await resealSecrets(deps, 'all');
    if (p.json) {
      io.out(JSON.stringify({ key_id: keyId, ...report }));
    } else {
      const source = config.secretKey !== null ? 'BILLING_SECRET_KEY' : (secretKeyFileOf(config.databaseUrl) ?? '');
      io.out(`re-encrypted with key ${keyId} (${source}): ${describeReseal(report)}`);
    }
    return EXIT_OK;
  });
}
