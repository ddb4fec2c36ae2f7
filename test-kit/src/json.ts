// The type of a parsed JSON answer as tests read it: JSON.parse's own (any). A test
// reads nested fields of an answer without narrowing each one; its expectations, and
// for a running system the OpenAPI document (contract.ts), check what the answer holds.
// Code outside the tests types its JSON instead.
export type JsonAnswer = ReturnType<typeof JSON.parse>;
