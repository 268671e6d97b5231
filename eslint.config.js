// Lint: the recommended JavaScript and TypeScript rules, plus a few house habits (no console in the server).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layering of docs/architecture.md, as import rules. In a flat config a rule set again for the same
// file replaces the earlier options, so every file below falls in exactly one layer block, and the
// database drivers' refusal (DRIVERS) is part of each block's own options.
const restrict = (groups, { paths = [], patterns = [] } = {}) => ({
  'no-restricted-imports': [
    'error',
    { patterns: [...groups.map(([group, message]) => ({ group, message })), ...patterns], paths },
  ],
});
const ENGINES = [
  ['**/store/sqlite/**', '**/store/postgres/**'],
  'only src/store/open-store.ts and src/store/copy.ts choose an engine; the rest of the code sees src/store/store.ts and src/store/repos/ (docs/architecture.md)',
];
const INTERFACES = [
  ['**/legacy/**', '**/admin/**', '**/console/**', '**/cli/**', '**/app.js', '**/main.js'],
  'the interfaces (legacy, admin, console, CLI, app) use the features, never the other way round (docs/architecture.md)',
];
const FEATURES = [
  [
    '**/porting/**',
    '**/intake/**',
    '**/answers/**',
    '**/migration/**',
    '**/retention/**',
    '**/idempotency/**',
    '**/rate-limit/**',
    '**/webhooks/**',
  ],
  'this layer sits below the features (docs/architecture.md)',
];
const LEAD = [['**/lead/**'], 'the store sits below the Lead entity (docs/architecture.md)'];
const RULES = [['**/rules/**'], 'the store knows nothing of the rules (docs/architecture.md)'];
// The database drivers belong to the engines in src/store/ and to the rate limiter's own store of shared counts.
const DRIVER_MESSAGE =
  "only src/store/ and the rate limiter's shared store (src/rate-limit/shared-limiter.ts, settled-quota.ts) use a database driver; the rest of the code sees src/store/store.ts (docs/architecture.md)";
const DRIVERS = {
  paths: ['pg', 'better-sqlite3'].map((name) => ({ name, message: DRIVER_MESSAGE })),
  // Their subpaths and pg's companion packages (pg-pool, pg-cursor, ...): by name, as a glob would also refuse a file of ours named pg-*.
  patterns: [{ regex: '^(pg|better-sqlite3)/|^pg-', message: DRIVER_MESSAGE }],
};
const LIMITER_STORE_FILES = ['src/rate-limit/shared-limiter.ts', 'src/rate-limit/settled-quota.ts'];
const OTHER_ENGINE = (engine) => [[`**/${engine}/**`], 'an engine never imports the other (docs/architecture.md)'];
const STORE_ENGINES_AND_FACTORY = [
  'src/store/sqlite/**',
  'src/store/postgres/**',
  'src/store/open-store.ts',
  'src/store/copy.ts',
];
const FEATURE_FILES = [
  'src/porting/**',
  'src/intake/**',
  'src/answers/**',
  'src/migration/**',
  'src/retention/**',
  'src/idempotency/**',
  'src/rate-limit/**',
  'src/webhooks/**',
];
// The request edge: src/http/ (body parsing, limits, problems, health, metrics, documents) and the
// shared pieces at the top of src/ that the features use too.
const EDGE_FILES = [
  'src/http/**',
  ...['errors', 'openapi', 'openapi-components', 'outage', 'printable-text', 'canonical-json', 'test-mode'].map(
    (f) => `src/${f}.ts`,
  ),
];
// Demo mode's published keys: app.ts refuses them and main.ts makes or revokes them, so it sits below both.
const DEMO_FILES = ['src/demo.ts'];
const LAYERED = [...FEATURE_FILES, ...EDGE_FILES, ...DEMO_FILES, 'src/lead/**', 'src/rules/**', 'src/store/**'];

export default tseslint.config(
  { ignores: ['dist/', '.test-build-*/', 'node_modules/', 'coverage/', 'data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // The process entry points and the CLI talk to a terminal on purpose.
    files: ['src/main.ts', 'src/cli/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // The CLI writes through src/cli/output.ts alone: no control character reaches the terminal (terminalText).
    files: ['src/cli/**/*.ts'],
    ignores: ['src/cli/output.ts'],
    rules: { 'no-console': 'error' },
  },
  // The interfaces, the processes and the request edge: any feature, never an engine.
  { files: ['src/**/*.ts', 'scripts/**/*.ts'], ignores: LAYERED, rules: restrict([ENGINES], DRIVERS) },
  {
    files: ['src/admin/**/*.ts', 'src/legacy/**/*.ts'],
    rules: restrict(
      [
        ENGINES,
        [
          ['**/console/**', '**/cli/**', '**/app.js', '**/main.js'],
          'the console and the CLI build on the admin API and the services, not the other way round (docs/architecture.md)',
        ],
      ],
      DRIVERS,
    ),
  },
  // The features and demo mode: the store's interface, the Lead entity, the rules; no interface, no engine, no driver.
  {
    files: [...FEATURE_FILES, ...EDGE_FILES, ...DEMO_FILES],
    ignores: LIMITER_STORE_FILES,
    rules: restrict([ENGINES, INTERFACES], DRIVERS),
  },
  // The rate limiter's shared store counts in PostgreSQL through its own pool (shared-limiter.ts).
  { files: LIMITER_STORE_FILES, rules: restrict([ENGINES, INTERFACES]) },
  { files: ['src/lead/**'], rules: restrict([ENGINES, INTERFACES, FEATURES], DRIVERS) },
  {
    files: ['src/rules/**'],
    rules: restrict(
      [ENGINES, INTERFACES, FEATURES, [['**/lead/**'], 'the rules sit below the Lead entity (docs/architecture.md)']],
      DRIVERS,
    ),
  },
  // The store: nothing of the features; each engine alone; only the factory and the copy know both.
  {
    files: ['src/store/**'],
    ignores: STORE_ENGINES_AND_FACTORY,
    rules: restrict([ENGINES, INTERFACES, FEATURES, LEAD, RULES]),
  },
  { files: ['src/store/sqlite/**'], rules: restrict([OTHER_ENGINE('postgres'), INTERFACES, FEATURES, LEAD, RULES]) },
  { files: ['src/store/postgres/**'], rules: restrict([OTHER_ENGINE('sqlite'), INTERFACES, FEATURES, LEAD, RULES]) },
  { files: ['src/store/open-store.ts', 'src/store/copy.ts'], rules: restrict([INTERFACES, FEATURES, LEAD, RULES]) },
  {
    // The console's script runs in the browser.
    files: ['src/console/static/**/*.js'],
    languageOptions: { globals: { document: 'readonly', navigator: 'readonly' } },
  },
);
