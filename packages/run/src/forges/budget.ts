/**
 * A run's allowance of content-creating requests (POST, PATCH, PUT, DELETE and GraphQL
 * mutations). GitHub allows about 80 a minute and 500 an hour before its secondary rate limits
 * stop a token; a run that would go past its budget stops cleanly instead, and the next run
 * resumes where it stopped (runs are idempotent).
 *
 * A job reserves what its writes may cost before making the first one, so a job either writes
 * everything it needs or nothing at all: no half-made pull request is ever left behind.
 *
 * The limit is a ceiling on requests that reach the server, retries included: a write that would
 * go past it is not sent ({@link Budget.admit}). The server's own rate-limit headers refine it
 * ({@link Budget.observe}): a server that reports no limit (GitHub Enterprise Server with rate
 * limits off) lifts the default budget; one that reports its remaining requests is kept inside.
 */
import { ForgeError } from './errors.js';

/** GitHub's ~500 content-creating requests an hour, less a margin for other tools on the same token. */
export const DEFAULT_BUDGET = 400;

export interface BudgetReport {
  readonly limit: number;
  readonly used: number;
  /** A job was refused its reservation: the rest of the run is deferred. */
  readonly exhausted: boolean;
}

export class Budget {
  readonly limit: number;
  /** Requests made. */
  private spent = 0;
  /** Reserved by jobs still running (an upper bound: a job's own requests are counted in both while it runs). */
  private pending = 0;
  private refused = false;
  /** The limit was not chosen by the user: a server without rate limits lifts it. */
  private readonly byDefault: boolean;
  /** The server reported no rate limit. */
  private unlimited = false;
  /** Requests the server says remain, when it says so. */
  private serverRemaining: number | undefined;

  constructor(limit?: number) {
    const value = limit ?? DEFAULT_BUDGET;
    if (!Number.isInteger(value) || value < 0)
      throw new ForgeError('invalid-option', `the budget must be a whole number of requests, 0 or more (got ${value})`);
    this.limit = value;
    this.byDefault = limit === undefined;
  }

  /** What the run may still write: its own limit (lifted by a server without limits), within what the server allows. */
  private get ceiling(): number {
    const own = this.unlimited && this.byDefault ? Number.POSITIVE_INFINITY : this.limit;
    return this.serverRemaining === undefined ? own : Math.min(own, this.spent + this.serverRemaining);
  }

  /**
   * What a response said of the server's rate limit: `remaining` requests, or undefined when it
   * reports no limit at all.
   */
  observe(remaining: number | undefined): void {
    if (remaining === undefined) {
      this.unlimited = true;
      return;
    }
    this.unlimited = false;
    this.serverRemaining = remaining;
  }

  /** One write is about to be sent (a retry too): counted, or refused when the ceiling is reached. */
  admit(): boolean {
    if (this.spent + 1 > this.ceiling) return false;
    this.spent++;
    return true;
  }

  get used(): number {
    return this.spent;
  }

  get exhausted(): boolean {
    return this.refused;
  }

  /**
   * Reserve `cost` requests for one job. Returns a release function, or undefined when the
   * budget cannot cover it: the budget is then exhausted and no further job should start.
   */
  reserve(cost: number): (() => void) | undefined {
    if (this.refused || this.spent + this.pending + cost > this.ceiling) {
      this.refused = true;
      return undefined;
    }
    this.pending += cost;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.pending -= cost;
    };
  }

  /** One content-creating request was made. */
  spend(n = 1): void {
    this.spent += n;
  }

  report(): BudgetReport {
    return { limit: this.limit, used: this.spent, exhausted: this.refused };
  }
}
