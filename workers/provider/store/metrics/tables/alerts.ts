// The alerts' tables (docs/operations.md "Alerts"): each rule's state (firing or not, since when,
// when it was last sent, its last value) and the messages waiting for the webhook, with their tries.

export interface AlertState {
  rule: string;
  firing: boolean;
  since: number;
  lastSent: number;
  value: number;
  text: string;
}

export interface AlertMessage {
  id: number;
  body: string;
  attempts: number;
}

export function createAlertTables(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS alert_state (rule TEXT PRIMARY KEY, firing INTEGER NOT NULL, since INTEGER NOT NULL, last_sent INTEGER NOT NULL, value REAL NOT NULL, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS alert_outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT NULL);`);
}

export class Alerts {
  constructor(private readonly sql: SqlStorage) {}

  states(): AlertState[] {
    return this.sql
      .exec("SELECT rule, firing, since, last_sent, value, text FROM alert_state ORDER BY rule")
      .toArray()
      .map((r) => ({
        rule: r.rule as string,
        firing: r.firing === 1,
        since: r.since as number,
        lastSent: r.last_sent as number,
        value: r.value as number,
        text: r.text as string,
      }));
  }

  put(s: AlertState): void {
    this.sql.exec(
      `INSERT INTO alert_state (rule, firing, since, last_sent, value, text) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (rule) DO UPDATE SET firing = excluded.firing, since = excluded.since, last_sent = excluded.last_sent, value = excluded.value, text = excluded.text`,
      s.rule,
      s.firing ? 1 : 0,
      s.since,
      s.lastSent,
      s.value,
      s.text,
    );
  }

  enqueue(body: string, at: number): void {
    this.sql.exec("INSERT INTO alert_outbox (body, next_at) VALUES (?, ?)", body, at);
  }

  due(now: number, limit: number): AlertMessage[] {
    return this.sql
      .exec("SELECT id, body, attempts FROM alert_outbox WHERE next_at <= ? ORDER BY id LIMIT ?", now, limit)
      .toArray()
      .map((r) => ({ id: r.id as number, body: r.body as string, attempts: r.attempts as number }));
  }

  sent(id: number): void {
    this.sql.exec("DELETE FROM alert_outbox WHERE id = ?", id);
  }

  /** A failed try: the next after `retryMs`, or the message dropped after its last try. */
  failed(id: number, attempts: number, retryAt: number | null): void {
    if (retryAt === null) this.sql.exec("DELETE FROM alert_outbox WHERE id = ?", id);
    else this.sql.exec("UPDATE alert_outbox SET attempts = ?, next_at = ? WHERE id = ?", attempts, retryAt, id);
  }
}
