// Runs in each test file before its tests. Workers share modules between the files they run
// (`isolate: false`), so what a shared test module keeps for a file is released here when the
// file is done.
import { afterAll } from 'vitest';
import { removeBuiltFleets } from '@kdelta/test-support';

afterAll(removeBuiltFleets);
