// kpt's pkg get / pkg update conformance scenarios (@kdelta/test-support's fixtures/pkg-update,
// converted from kptdev/kpt, Apache-2.0), run against this package's API directly with real local
// git repositories: the same scenarios and skip list as the CLI's conformance test.
import { describePkgUpdateConformance } from '@kdelta/test-support';
import { drive } from './__fixtures__/driver.js';
import { isUpdateStrategy, replaceNonKrmFiles, updater } from './index.js';

const argParseReason = "command-line parsing is the CLI's, not the library's: packages/cli/src/pkg/conformance.test.ts runs these";

describePkgUpdateConformance({
  run: drive,
  library: { isUpdateStrategy, updater, replaceNonKrmFiles },
  argParseSkipReason: argParseReason,
});
