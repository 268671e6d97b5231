// Who a console session is: the service team only by an explicit null workspace, never by a missing one.
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { viewerOf } from '../../src/console/pages.js';

const withSession = (session: Record<string, unknown> | undefined) =>
  ({ session }) as unknown as Pick<FastifyRequest, 'session'>;

describe('viewerOf', () => {
  it('reads a workspace owner and the service team from what sign-in stored', () => {
    expect(viewerOf(withSession({ user: 'owner', workspace: 'smile-dental' }))).toEqual({
      name: 'owner',
      workspace: 'smile-dental',
    });
    expect(viewerOf(withSession({ user: 'dilnoza', workspace: null }))).toEqual({ name: 'dilnoza', workspace: null });
  });

  it('denies a session without a workspace value instead of reading it as the service team', () => {
    expect(viewerOf(withSession({ user: 'someone' }))).toBeNull();
  });

  it('denies no session and a session without a user', () => {
    expect(viewerOf(withSession(undefined))).toBeNull();
    expect(viewerOf(withSession({ workspace: null }))).toBeNull();
  });
});
