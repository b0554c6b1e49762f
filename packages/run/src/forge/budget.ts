/**
 * A run's allowance of content-creating requests (POST, PATCH, PUT, DELETE and GraphQL
 * mutations). GitHub allows about 80 a minute and 500 an hour before its secondary rate limits
 * stop a token; a run that would go past its budget stops cleanly instead, and the next run
 * resumes where it stopped (runs are idempotent).
 *
 * A job reserves what its writes may cost before making the first one, so a job either writes
 * everything it needs or nothing at all: no half-made pull request is ever left behind.
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

  constructor(limit: number = DEFAULT_BUDGET) {
    if (!Number.isInteger(limit) || limit < 0)
      throw new ForgeError('invalid-option', `the budget must be a whole number of requests, 0 or more (got ${limit})`);
    this.limit = limit;
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
    if (this.refused || this.spent + this.pending + cost > this.limit) {
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
