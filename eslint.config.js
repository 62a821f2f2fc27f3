// ESLint (flat config): JavaScript's and typescript-eslint's recommended rules, with type
// information so that a promise nobody awaits is caught. No formatting rules: layout is not
// linted here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'data/', 'migrations/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    // The two tsconfigs named, rather than `projectService`: one program each, built once. Measured
    // on the whole tree: 29 -> 24 s and 2.06 -> 1.68 GB peak (a lint run killed for time or memory
    // prints nothing). A .ts file outside both is an error here, so a new folder must join one.
    languageOptions: { parserOptions: { project: ['./tsconfig.json', './ui/tsconfig.json'], tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      // `_`-prefixed names are deliberately unused (destructuring a field away, an unused parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-unused-expressions': ['error', { allowTernary: true }],
    },
  },
  // Tests and fake vendors read arbitrary JSON bodies; typing each one would say nothing.
  { files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
