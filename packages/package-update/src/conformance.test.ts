// kpt's updater conformance scenarios (@kdelta/test-support's fixtures/pkg-update, kind threeWay,
// converted from kptdev/kpt, Apache-2.0): each strategy, and the non-KRM file replacement, on three
// package trees through this package's three-way entry points. The command-line scenarios
// (`pkg get`, `pkg update` on real git repositories) run once, through the CLI, which calls this
// package: packages/cli/src/pkg/conformance.test.ts.
import { describeThreeWayConformance } from '@kdelta/test-support';
import { isUpdateStrategy, replaceNonKrmFiles, updater } from './index.js';

describeThreeWayConformance({ isUpdateStrategy, updater, replaceNonKrmFiles });
