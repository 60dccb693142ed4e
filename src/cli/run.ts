/**
 * The CLI's dispatcher: the command table, the overall usage, and the one place that turns
 * errors into exit statuses (2 usage, 1 configuration, database or a refused request; never a
 * stack trace for those). A bug still throws, with its stack.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config.js';
import { DbConnectError } from '../db-connect.js';
import { OutcomeError } from '../domain/outcome.js';
import { SecretBoxError } from '../lib/secret-box.js';
import { type Io, CliError, EXIT_ERROR, EXIT_OK, EXIT_USAGE, UsageError } from './common.js';
import {
  AUDIT_USAGE,
  BACKUP_USAGE,
  COMPANY_USAGE,
  KEY_USAGE,
  MIGRATE_USAGE,
  SECRETS_USAGE,
  SERVE_USAGE,
  USER_USAGE,
} from './usage.js';

type Command = (args: string[], io: Io) => Promise<number>;

/** Each command's module is loaded only when it runs: `billing key list` need not load the server. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).serveCommand,
  migrate: async () => (await import('./migrate.js')).migrateCommand,
  user: async () => (await import('./user.js')).userCommand,
  company: async () => (await import('./company.js')).companyCommand,
  key: async () => (await import('./key.js')).keyCommand,
  audit: async () => (await import('./audit.js')).auditCommand,
  backup: async () => (await import('./backup.js')).backupCommand,
  secrets: async () => (await import('./secrets.js')).secretsCommand,
};

export const USAGE = `Usage: billing <command> [options]

Commands:
${[SERVE_USAGE, MIGRATE_USAGE, USER_USAGE, COMPANY_USAGE, KEY_USAGE, AUDIT_USAGE, BACKUP_USAGE, SECRETS_USAGE]
  .flatMap((u) => u.split('\n'))
  .map((u) => `  ${u}`)
  .join('\n')}

billing <command> --help says more. The database and every other setting come from the environment,
as for the server (DATABASE_URL, default sqlite:./data/billing.sqlite; see the README).
Exit status: 0 done, 1 error (configuration, database, refused), 2 wrong usage, 3 audit found problems.`;

function version(): string {
  // src/cli/ and dist/cli/ both sit two levels below package.json.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export async function run(argv: string[], io: Io): Promise<number> {
  try {
    const [command, ...args] = argv;
    if (command === undefined) throw new UsageError('missing command', USAGE);
    if (command === '--help' || command === '-h' || command === 'help') {
      io.out(USAGE);
      return EXIT_OK;
    }
    if (command === '--version') {
      io.out(version());
      return EXIT_OK;
    }
    const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!load) throw new UsageError(`unknown command "${command}"`, USAGE);
    return await (await load())(args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`billing: ${err.message}`);
      io.err('');
      io.err(
        err.usage === USAGE || err.usage === undefined ? USAGE : `Usage: ${err.usage.split('\n').join('\n       ')}`,
      );
      return EXIT_USAGE;
    }
    if (err instanceof ConfigError) {
      io.err('billing: configuration error');
      for (const problem of err.problems) io.err(`  ${problem}`);
      return EXIT_ERROR;
    }
    if (err instanceof DbConnectError || err instanceof CliError || err instanceof SecretBoxError) {
      io.err(`billing: ${err.message}`);
      return EXIT_ERROR;
    }
    if (err instanceof OutcomeError) {
      io.err(`billing: ${err.failure.message}`);
      return EXIT_ERROR;
    }
    throw err;
  }
}
