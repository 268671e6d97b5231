// The header that marks every answer to a call made with a v1 test key (docs/api.md, "Test mode"):
// set by the key check, read by the error handler, which words a test call's 503 apart.

/** Present, as "true", on every answer to a test key's call, problems included; never on a live call's. */
export const TEST_MODE_HEADER = 'lead-gateway-test-mode';
