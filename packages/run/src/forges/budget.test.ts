import { describe, expect, it } from 'vitest';
import { Budget, DEFAULT_BUDGET } from './budget.js';

describe('the run budget of content-creating requests', () => {
  it('grants reservations while they fit, then refuses every later one', () => {
    const budget = new Budget(10);
    const first = budget.reserve(4);
    expect(first).toBeTypeOf('function');
    budget.spend(3);
    first?.();
    // 3 used, nothing pending: 7 left
    const second = budget.reserve(7);
    expect(second).toBeTypeOf('function');
    budget.spend(7);
    second?.();
    expect(budget.reserve(1)).toBeUndefined();
    expect(budget.report()).toEqual({ limit: 10, used: 10, exhausted: true });
    // once refused, even a free job does not start: the run stops cleanly
    expect(budget.reserve(0)).toBeUndefined();
  });

  it('counts what running jobs reserved, so two jobs together never overrun it', () => {
    const budget = new Budget(10);
    const a = budget.reserve(6);
    expect(a).toBeDefined();
    expect(budget.reserve(5)).toBeUndefined();
    expect(budget.exhausted).toBe(true);
  });

  it('releasing twice frees the reservation once', () => {
    const budget = new Budget(5);
    const a = budget.reserve(5)!;
    a();
    a();
    expect(budget.reserve(5)).toBeDefined();
    expect(budget.reserve(1)).toBeUndefined();
  });

  it('defaults to 400 (GitHub allows about 500 an hour) and refuses a negative or fractional limit', () => {
    expect(new Budget().limit).toBe(DEFAULT_BUDGET);
    expect(DEFAULT_BUDGET).toBe(400);
    expect(() => new Budget(-1)).toThrow(/whole number/);
    expect(() => new Budget(1.5)).toThrow(/whole number/);
  });
});
