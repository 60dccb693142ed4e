/**
 * Where the keys of secrets at rest come from (server and CLI start), as a SecretBox:
 *
 * - BILLING_SECRET_KEY, when set: `id:base64[,id:base64…]`, the first key current. With a SQLite
 *   file, the keys of its key file (below), when it exists, are added after them as old keys, so
 *   that moving from the file to the variable is one `billing secrets rotate`.
 * - Otherwise, a SQLite file database: the key file beside it, `<database file>.secret-key` (the
 *   same format), created on first start with a new key, owner-only (0600), and said in the log.
 *   Back it up apart from the database: the one without the other does not give the secrets.
 * - `sqlite::memory:`: a key of this process only (the database dies with it).
 * - PostgreSQL: BILLING_SECRET_KEY is required (a key of one process would not open what another
 *   process or the next start sealed); only a test run (NODE_ENV=test or BILLING_TEST_CLOCK=1,
 *   never NODE_ENV=production) may start with a process key, with a warning.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError, type Config } from './config.js';
import { SecretBox, keyIdOf, newSecretKeyText, parseSecretKeys, type SecretKey } from './lib/secret-box.js';

/** The key file of a SQLite file database; undefined for memory and PostgreSQL. */
export function secretKeyFileOf(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined;
  const file = databaseUrl.slice('sqlite:'.length);
  return file === ':memory:' ? undefined : `${file}.secret-key`;
}

function processKey(): SecretKey[] {
  const key = randomBytes(32);
  return [{ id: keyIdOf(key), key }];
}

function readKeyFile(path: string, log: (line: string) => void): SecretKey[] {
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) !== 0)
    log(`the secret key file ${path} is readable by others (mode ${mode.toString(8)}): chmod 600 it`);
  try {
    return parseSecretKeys(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError([`the secret key file ${path} ${(err as Error).message}`]);
  }
}

/** Creates the key file with a new key, unless another process just did (then reads that one). */
function createKeyFile(path: string, log: (line: string) => void): SecretKey[] {
  let fd: number;
  try {
    mkdirSync(dirname(path), { recursive: true }); // the default ./data/ is made on first start
    fd = openSync(path, 'wx', 0o600);
  } catch (err) {
    if ((err as { code?: string }).code === 'EEXIST') return readKeyFile(path, log);
    throw err;
  }
  try {
    writeSync(fd, `${newSecretKeyText()}\n`);
  } finally {
    closeSync(fd);
  }
  log(
    `generated a secret key for the stored webhook secrets and processor keys into ${path} (mode 600); ` +
      'back it up apart from the database, or set BILLING_SECRET_KEY',
  );
  return readKeyFile(path, log);
}

/**
 * The configured keys as a box; throws ConfigError (plain words) when PostgreSQL has no key. With
 * `optional` (CLI commands that may never touch a secret), that problem makes a box without keys
 * whose every use says it instead.
 */
export function secretBoxFor(
  config: Pick<Config, 'databaseUrl' | 'secretKey' | 'nodeEnv' | 'testClock'>,
  opts: { log: (line: string) => void; optional?: boolean },
): SecretBox {
  const file = secretKeyFileOf(config.databaseUrl);
  if (config.secretKey !== null) {
    const keys = parseSecretKeys(config.secretKey);
    if (file !== undefined && existsSync(file)) {
      for (const k of readKeyFile(file, opts.log)) if (!keys.some((c) => c.id === k.id)) keys.push(k);
    }
    return new SecretBox(keys);
  }
  if (file !== undefined)
    return new SecretBox(existsSync(file) ? readKeyFile(file, opts.log) : createKeyFile(file, opts.log));
  if (config.databaseUrl.startsWith('sqlite:')) return new SecretBox(processKey());
  const testRun = config.nodeEnv !== 'production' && (config.nodeEnv === 'test' || config.testClock);
  if (testRun) {
    opts.log('no BILLING_SECRET_KEY: this test run seals secrets with a key of this process only');
    return new SecretBox(processKey());
  }
  const problem =
    'BILLING_SECRET_KEY is required with PostgreSQL' +
    (config.nodeEnv === 'production' ? ' in production' : '') +
    ': it encrypts the stored webhook secrets and processor keys, and every process needs the same one ' +
    '(generate one with `billing secrets new-key`)';
  if (opts.optional) return new SecretBox([], problem);
  throw new ConfigError([problem]);
}
