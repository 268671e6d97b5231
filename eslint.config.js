// Lint: the recommended JavaScript and TypeScript rules, plus a few house habits (no console in the server).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'data/'] },
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
    // The console's script runs in the browser.
    files: ['src/console/static/**/*.js'],
    languageOptions: { globals: { document: 'readonly', navigator: 'readonly' } },
  },
);
