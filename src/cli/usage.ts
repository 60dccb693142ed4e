/** The usage line(s) of each CLI command: shown by `billing --help` without loading the commands themselves. */
export const SERVE_USAGE = 'billing serve';
export const MIGRATE_USAGE = 'billing migrate';
export const USER_USAGE = 'billing user create --email EMAIL --name NAME [--password PASSWORD] [--json]';
export const COMPANY_USAGE =
  'billing company create --owner-email EMAIL --name NAME [--processor stripe --processor-api-key KEY] [--json]';
export const KEY_USAGE = [
  'billing key create --company COMPANY_ID [--json]',
  'billing key list --company COMPANY_ID [--json]',
  'billing key revoke --company COMPANY_ID --key-id KEY_ID',
].join('\n');
export const AUDIT_USAGE = 'billing audit [--json]';
export const BACKUP_USAGE = 'billing backup FILE';
export const SECRETS_USAGE = ['billing secrets rotate [--json]', 'billing secrets new-key'].join('\n');
