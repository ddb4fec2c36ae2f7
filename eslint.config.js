// `npm run lint` (and the start of `npm test`): typescript-eslint's type-checked
// recommended rules, no import cycle, and the layers of every service and of the
// gateway (docs/architecture.md): contract/ imports none of its service's folders,
// data/ imports no domain/, domain/ imports no routes/, consumers/ or jobs/, and
// upstream/ imports no domain/ (nor routes/, consumers/, jobs/).
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const ROOTS = ['services/*/src', 'gateway/src'];
const inFolder = (folder) => ROOTS.map((root) => `${root}/${folder}/**/*.ts`);

/** An error for an import of one of `folders`, relative to any depth of this service. */
const noImportOf = (folders, message) => ({
  '@typescript-eslint/no-restricted-imports': [
    'error',
    { patterns: [{ regex: `^(\\.\\./)+(${folders.join('|')})/`, message }] },
  ],
});

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'sdk/src/schema.d.ts',
      '.data/**',
      'coverage/**',
      'test-artifacts/**',
    ],
  },
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver()],
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: { 'import-x/no-cycle': 'error' },
  },
  {
    rules: {
      // A leading _ names what is left unused on purpose (the rest of a destructuring, a callback's first argument).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // A let that a closure reads before its one assignment (a handle wired before its object exists) stays a let.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // An async function without await is how this code meets an interface that returns a promise (change callbacks, hooks, fakes).
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['**/test/**/*.ts', 'test/**/*.ts', 'test-kit/**/*.ts', 'scripts/drill/**/*.ts'],
    // Tests, their kit and the drill read JSON answers, which inject().json() and fetch().json() type as any; test-kit/src/contract.ts checks their shape.
    rules: Object.fromEntries(
      [
        'no-unsafe-assignment',
        'no-unsafe-member-access',
        'no-unsafe-argument',
        'no-unsafe-call',
        'no-unsafe-return',
      ].map((rule) => [`@typescript-eslint/${rule}`, 'off']),
    ),
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  {
    files: inFolder('contract'),
    rules: noImportOf(
      ['routes', 'domain', 'data', 'upstream', 'consumers', 'jobs'],
      'contract/ is the bottom layer: the others import it, it imports none of them',
    ),
  },
  {
    files: inFolder('data'),
    rules: noImportOf(
      ['routes', 'domain', 'consumers', 'jobs'],
      'data/ imports no layer above it (errors and value lists are in contract/)',
    ),
  },
  {
    files: inFolder('domain'),
    rules: noImportOf(
      ['routes', 'consumers', 'jobs'],
      'domain/ imports no layer above it (request types are in contract/)',
    ),
  },
  {
    files: inFolder('upstream'),
    rules: noImportOf(
      ['routes', 'domain', 'consumers', 'jobs'],
      'upstream/ serves the domain and imports none of it (the shapes it answers are its own, or in contract/)',
    ),
  },
  {
    // The image has the gateway and no scripts/ (development tooling): scripts/ may use the gateway, never the reverse.
    files: ['gateway/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)scripts/',
              message:
                'gateway/ imports nothing from scripts/: scripts/ passes what the gateway needs (scripts/admin.ts)',
            },
          ],
        },
      ],
    },
  },
  // Small modules and functions a reader takes in whole (CONTRIBUTING.md). A test file's
  // describe and test callbacks are its chapters, not functions: only its length counts.
  { files: ['**/*.ts'], rules: { 'max-lines': ['error', { max: 400 }] } },
  {
    files: ['**/*.ts'],
    ignores: ['**/test/**/*.ts', 'test/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
);
