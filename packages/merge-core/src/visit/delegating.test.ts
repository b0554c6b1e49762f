import { describe } from 'vitest';
import { type Row, visitorTable } from './__fixtures__/visitor-table.js';
import { delegatingVisitor } from './delegating.js';

// The delegating visitor hands a pinned field to the pin's visitor, every other to the strategy.
describe('delegating: the pin or the strategy, per field', () => {
  for (const strategy of ['upstream-wins', 'local-wins', 'fail'] as const) {
    const visitor = delegatingVisitor(strategy);
    const bothChanged: Pick<Row, 'decision' | 'expected' | 'reports'> =
      strategy === 'local-wins'
        ? { decision: { take: 'local', rule: 'both-changed-local-wins', report: 'local-won' }, expected: 3, reports: ['.f local-won'] }
        : { decision: { take: 'upstream', rule: 'upstream-changed', report: 'upstream-won' }, expected: 2, reports: ['.f upstream-won'] };
    describe(strategy, () => {
      visitorTable('scalar', visitor, strategy, [
        {
          name: 'pinned: the pin decides',
          origin: '1',
          upstream: '2',
          local: '3 # kdelta:local',
          decision: { take: 'local', rule: 'pinned-local', report: 'pinned' },
          expected: 3,
          reports: ['.f pinned'],
        },
        { name: 'not pinned: the strategy decides', origin: '1', upstream: '2', local: '3', ...bothChanged },
      ]);
      visitorTable('map', visitor, strategy, [
        {
          name: 'pinned: the pin decides',
          origin: 'a: 1',
          upstream: 'null',
          local: '# kdelta:local\na: 2',
          decision: { action: 'keep', rule: 'pinned-local', report: 'pinned' },
          expected: { a: 2 },
          reports: ['.f pinned'],
        },
      ]);
    });
  }
});
