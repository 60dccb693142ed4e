/**
 * A transaction of either SQL store: one object per aggregate (`tx.accounts`, `tx.balances`, …), each
 * made on first use with the connection and the dialect, and the ledger's port (src/ledger/port.ts).
 * Where a database writes an aggregate its own way (row locks, batch statements), the dialect gives
 * its subclass of the shared SQL (`DialectParts`): plain composition, so that "go to definition" leads
 * to the statement, and nothing depends on an order of mixing.
 */
import { LEDGER_PORT } from '../ledger/port.js';
import { AccountsSql } from './accounts/sql.js';
import { AlertsSql } from './alerts/sql.js';
import { FeaturesSql } from './features/sql.js';
import { PortalSessionsSql } from './portal-sessions/sql.js';
import { TopupOffersSql } from './topup-offers/sql.js';
import { LeasesSql } from './leases/sql.js';
import { BalancesSql } from './balances/sql.js';
import { CardsSql } from './cards/sql.js';
import { ChargesSql } from './charges/sql.js';
import type { EventsSql } from './events/sql.js';
import { GrantsSql } from './grants/sql.js';
import { IdempotencySql } from './idempotency/sql.js';
import { IdentitySql } from './identity/sql.js';
import type { LedgerSql } from './ledger/sql.js';
import { OutboxSql } from './outbox/sql.js';
import { PlansSql } from './plans/sql.js';
import { PricesSql } from './prices/sql.js';
import { RefillsSql } from './refills/sql.js';
import { SessionsSql } from './sessions/sql.js';
import type { Dialect, SqlExec } from './sql-core.js';
import { TransactionsSql } from './transactions/sql.js';
import type { Tx } from './types.js';
import type { UsageSql } from './usage/sql.js';
import type { WebhooksSql } from './webhooks/sql.js';

/** The aggregates a database writes its own way: its subclasses of the shared SQL. */
export interface DialectParts<E extends SqlExec> {
  events(db: E): EventsSql;
  usage(db: E): UsageSql;
  webhooks(db: E): WebhooksSql;
  ledger(db: E): LedgerSql;
}

export class SqlTx<E extends SqlExec> implements Tx {
  #identity?: IdentitySql;
  #idempotency?: IdempotencySql;
  #accounts?: AccountsSql;
  #balances?: BalancesSql;
  #alerts?: AlertsSql;
  #features?: FeaturesSql;
  #grants?: GrantsSql;
  #prices?: PricesSql;
  #events?: EventsSql;
  #usage?: UsageSql;
  #cards?: CardsSql;
  #refills?: RefillsSql;
  #charges?: ChargesSql;
  #transactions?: TransactionsSql;
  #plans?: PlansSql;
  #webhooks?: WebhooksSql;
  #outbox?: OutboxSql;
  #sessions?: SessionsSql;
  #portalSessions?: PortalSessionsSql;
  #topupOffers?: TopupOffersSql;
  #leases?: LeasesSql;
  #ledger?: LedgerSql;

  constructor(
    private readonly db: E,
    private readonly dialect: Dialect,
    private readonly parts: DialectParts<E>,
  ) {}

  get identity(): IdentitySql {
    this.#identity ??= new IdentitySql(this.db, this.dialect);
    return this.#identity;
  }
  get idempotency(): IdempotencySql {
    this.#idempotency ??= new IdempotencySql(this.db, this.dialect);
    return this.#idempotency;
  }
  get accounts(): AccountsSql {
    this.#accounts ??= new AccountsSql(this.db, this.dialect);
    return this.#accounts;
  }
  get balances(): BalancesSql {
    this.#balances ??= new BalancesSql(this.db, this.dialect);
    return this.#balances;
  }
  get alerts(): AlertsSql {
    this.#alerts ??= new AlertsSql(this.db, this.dialect);
    return this.#alerts;
  }
  get features(): FeaturesSql {
    this.#features ??= new FeaturesSql(this.db, this.dialect);
    return this.#features;
  }
  get portalSessions(): PortalSessionsSql {
    this.#portalSessions ??= new PortalSessionsSql(this.db, this.dialect);
    return this.#portalSessions;
  }
  get leases(): LeasesSql {
    this.#leases ??= new LeasesSql(this.db, this.dialect);
    return this.#leases;
  }
  get topupOffers(): TopupOffersSql {
    this.#topupOffers ??= new TopupOffersSql(this.db, this.dialect);
    return this.#topupOffers;
  }
  get grants(): GrantsSql {
    this.#grants ??= new GrantsSql(this.db, this.dialect);
    return this.#grants;
  }
  get prices(): PricesSql {
    this.#prices ??= new PricesSql(this.db, this.dialect);
    return this.#prices;
  }
  get events(): EventsSql {
    this.#events ??= this.parts.events(this.db);
    return this.#events;
  }
  get usage(): UsageSql {
    this.#usage ??= this.parts.usage(this.db);
    return this.#usage;
  }
  get cards(): CardsSql {
    this.#cards ??= new CardsSql(this.db, this.dialect);
    return this.#cards;
  }
  get refills(): RefillsSql {
    this.#refills ??= new RefillsSql(this.db, this.dialect);
    return this.#refills;
  }
  get charges(): ChargesSql {
    this.#charges ??= new ChargesSql(this.db, this.dialect);
    return this.#charges;
  }
  get transactions(): TransactionsSql {
    this.#transactions ??= new TransactionsSql(this.db, this.dialect, this.charges);
    return this.#transactions;
  }
  get plans(): PlansSql {
    this.#plans ??= new PlansSql(this.db, this.dialect);
    return this.#plans;
  }
  get webhooks(): WebhooksSql {
    this.#webhooks ??= this.parts.webhooks(this.db);
    return this.#webhooks;
  }
  get outbox(): OutboxSql {
    this.#outbox ??= new OutboxSql(this.db, this.dialect);
    return this.#outbox;
  }
  get sessions(): SessionsSql {
    this.#sessions ??= new SessionsSql(this.db, this.dialect);
    return this.#sessions;
  }
  get [LEDGER_PORT](): LedgerSql {
    this.#ledger ??= this.parts.ledger(this.db);
    return this.#ledger;
  }
}
