// vitest setup file of every config: ends the processes and clusters a test started when the test
// ends (passed, failed or timed out), and those started outside a test when the file ends. Listed
// first, so its afterEach and afterAll run after the file's own (a file's graceful stop comes first).
import { afterAll, afterEach, beforeEach } from 'vitest';
import { ownedHooks } from './owned.js';

beforeEach((context) => ownedHooks.testStarts(context.task.concurrent === true));
afterEach(() => ownedHooks.testEnds());
afterAll(() => ownedHooks.fileEnds());
