// ESLint (flat config): JavaScript's and typescript-eslint's recommended rules, with type
// information so that a promise nobody awaits is caught. No formatting rules: layout is not
// linted here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const untypedRules = {
  // `_`-prefixed names are deliberately unused (destructuring a field away, an unused parameter).
  '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
  '@typescript-eslint/no-unused-expressions': ['error', { allowTernary: true }],
};
const typedRules = {
  ...untypedRules,
  '@typescript-eslint/no-floating-promises': 'error',
  '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
};

// Each file gets the one tsconfig that holds it, rather than `projectService` or a list of both:
// one program per tsconfig, and none built only to find a file is not in it (the web UI's files
// made the service's whole program before, 0.66 GB to lint ui/ alone). A lint run killed for
// time or memory prints nothing, so both are kept down: package.json lints each program in a
// process of its own with a capped heap; a .ts file outside its tsconfig is an error.
// test/ is linted without type information (tsconfig.lint.json leaves it out): typing it meant
// a program of the service, every test and both SDKs, 1.0 GB of memory and 29-30 s in a 1 GB
// heap; without it, 0.82-0.85 GB and 20-29 s in 700 MB, the tests themselves taking 6 s. Vitest
// fails a test whose `.resolves`/`.rejects` assertion nobody awaited, the floating promise that
// matters most there, and `tsc` (the build) still type-checks the tests.
const typed = (project) => ({ parserOptions: { project, tsconfigRootDir: import.meta.dirname } });

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'data/', 'migrations/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { files: ['**/*.ts'], ignores: ['ui/**', 'test/**'], languageOptions: typed('./tsconfig.lint.json'), rules: typedRules },
  { files: ['test/**/*.ts'], rules: untypedRules },
  { files: ['ui/**/*.ts'], languageOptions: typed('./ui/tsconfig.json'), rules: typedRules },
  // Tests and fake vendors read arbitrary JSON bodies; typing each one would say nothing.
  { files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
