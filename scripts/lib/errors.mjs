// The CLI's own errors, one per exit code (docs/operations.md "Admin CLI"): 2 a usage error (the
// command's help follows), 1 the service refused or could not be reached, or the work stopped.

/** A command line that cannot run: exit 2 with the command's help. */
export class UsageError extends Error {}

/** The service's refusal (`status` set) or no answer at all (`status` undefined): exit 1. */
export class ServiceError extends Error {
  /**
   * @param {string} message
   * @param {number} [status]
   * @param {unknown} [body]
   * @param {string} [hint] a line printed after the message (what to do next)
   */
  constructor(message, status, body, hint) {
    super(message);
    this.status = status;
    this.body = body;
    this.hint = hint;
    /** A 429's `Retry-After` in seconds, when it sent one. */
    this.retryAfter = undefined;
    /** A busy directory's `Admin-Busy`: what it waits for (`import-lease`, `sign-ins`). */
    this.busy = undefined;
  }
}

/** Anything else that ends a command with a message and no help: a file it cannot read, a refused state. */
export class CliError extends Error {
  /** @param {string} message @param {number} exitCode */
  constructor(message, exitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}
