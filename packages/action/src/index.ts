// The Action's entry point (bundled into dist/index.js, which action.yml runs).
import { main } from './main.js';

await main();
