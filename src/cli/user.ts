/**
 * `billing user create`: a user, through the same sign-up operation as `POST /v1/users` (the
 * way to create the first user when BILLING_SIGNUP=closed). The password never appears in output.
 */
import { Value } from '@sinclair/typebox/value';
import { Email, TEXT_LENGTH_MAX, Text } from '../http/schemas/common.js';
import { PASSWORD_LENGTH_MIN, signUp } from '../operations/identity.js';
import { USER_USAGE } from './usage.js';
import { type Io, EXIT_OK, JSON_OPTION, UsageError, parseCommand, required, withStore } from './common.js';

const USER_HELP = `Usage: ${USER_USAGE}

Creates a user (who can then own companies). The password, at least ${PASSWORD_LENGTH_MIN} characters, is taken
from --password, else from BILLING_USER_PASSWORD, else from standard input (one line), for example:
  read -rs PASSWORD && printf '%s\\n' "$PASSWORD" | billing user create --email ada@example.com --name 'Ada Lovelace'
Prefer the last two: a --password value is visible to other users of the machine (ps).`;

/** --password, else BILLING_USER_PASSWORD, else the first line of standard input. */
async function passwordFrom(flag: string | boolean | undefined, io: Io): Promise<string> {
  if (typeof flag === 'string') return flag;
  const env = io.env.BILLING_USER_PASSWORD;
  if (env !== undefined && env !== '') return env;
  const stdin = await io.readStdin();
  const line = stdin?.split(/\r?\n/)[0] ?? '';
  if (line === '')
    throw new UsageError(
      'no password: give --password, set BILLING_USER_PASSWORD, or write it on standard input',
      USER_USAGE,
    );
  return line;
}

export async function userCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') {
    io.out(USER_HELP);
    return EXIT_OK;
  }
  if (sub !== 'create')
    throw new UsageError(sub === undefined ? 'missing subcommand' : `unknown subcommand "user ${sub}"`, USER_USAGE);
  const p = parseCommand(
    rest,
    { email: { type: 'string' }, name: { type: 'string' }, password: { type: 'string' }, ...JSON_OPTION },
    USER_USAGE,
  );
  if (p.help) {
    io.out(USER_HELP);
    return EXIT_OK;
  }
  const email = required(p.values, 'email', USER_USAGE);
  const name = required(p.values, 'name', USER_USAGE);
  // The API's own schemas: the CLI accepts exactly what POST /v1/users accepts.
  if (!Value.Check(Email, email)) throw new UsageError(`--email must be an e-mail address, got "${email}"`, USER_USAGE);
  if (!Value.Check(Text(), name)) throw new UsageError(`--name must be 1 to ${TEXT_LENGTH_MAX} characters`, USER_USAGE);
  const password = await passwordFrom(p.values.password, io);
  return withStore(io, async ({ deps }) => {
    const user = await deps.store.write(await signUp(deps, { name, email, password }));
    if (p.json) io.out(JSON.stringify({ user_id: user.id, email: user.email, name: user.name }));
    else io.out(`user ${user.id} created: ${user.email}`);
    return EXIT_OK;
  });
}
