/** One Jest run over every workspace; integration tests share the servers started in test/global-setup.ts. */
export default {
  testEnvironment: 'node',
  // The SDK's exports give its built dist/ to projects; in this repository its TypeScript source (sdk/package.json).
  testEnvironmentOptions: { customExportConditions: ['node', 'node-addons', 'lpm-source'] },
  testMatch: ['<rootDir>/{shared,gateway,sdk,services/*}/test/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } },
    ],
  },
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
};
