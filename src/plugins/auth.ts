// Authentication: API keys for the public API, the operator's ADMIN_TOKEN for /v1/admin.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, insufficientScope, notFound, unauthenticated } from '../errors.js';
import { createAuthThrottle } from '../services/auth-throttle.js';
import { createAuthenticator, type Authenticator, type Principal } from '../services/authenticator.js';
import { onKeyChange } from '../services/key-notices.js';

declare module 'fastify' {
  interface FastifyInstance {
    authenticator: Authenticator;
    /** onRequest hook: rejects requests without a valid API key, else sets request.principal. */
    requireApiKey: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /** onRequest hook after requireApiKey: 403 insufficient_scope unless the key has the `manage` scope. */
    requireManageScope: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /** onRequest hook for the admin API. */
    requireAdminToken: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

const digest = (value: string) => createHash('sha256').update(value).digest();

const tooManyFailures = (waitMs: number) => {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new ApiError(
    429,
    'rate_limit_error',
    'too_many_failed_attempts',
    `Too many failed admin authentication attempts from this address; retry in ${seconds} s.`,
    null,
    { 'retry-after': String(seconds) },
  );
};

async function auth(app: FastifyInstance) {
  const authenticator = createAuthenticator(app.db, app.config.keyCacheTtlMs);
  app.decorate('authenticator', authenticator);
  app.decorateRequest('principal', null as unknown as Principal);

  app.decorate('requireApiKey', async (request: FastifyRequest) => {
    request.principal = await authenticator.authenticate(request.headers.authorization);
  });
  app.decorate('requireManageScope', async (request: FastifyRequest) => {
    if (request.principal.scope !== 'manage') throw insufficientScope();
  });

  // Revoked, changed, disabled: every process drops the cached key when the change commits.
  // In place before the server listens (onReady), while the routes register: the first LISTEN on
  // the embedded database took 50-70 ms at start-up, which the registrations after it waited for.
  const listening = onKeyChange(app.database, (notice) =>
    notice.kind === 'key' ? authenticator.forget(notice.prefix) : authenticator.forgetAccount(notice.accountId),
  );
  listening.catch(() => {}); // reported by onReady
  app.addHook('onReady', async () => {
    await listening;
  });
  // The database may be gone already (closed by its owner): nothing is left to stop listening on.
  app.addHook('onClose', () => listening.then((unsubscribe) => unsubscribe()).catch(() => {}));

  const adminDigest = app.config.adminToken ? digest(app.config.adminToken) : null;
  const throttle = createAuthThrottle(app.config.adminAuthMaxFailuresPerMinute);
  app.decorate('requireAdminToken', async (request: FastifyRequest) => {
    // Without ADMIN_TOKEN the admin API does not exist, as far as anyone can tell.
    if (!adminDigest) throw notFound('unknown_route', `Unknown request URL: ${request.method} ${request.url.split('?')[0]}.`);
    // request.ip is the client's own address, or the proxy's X-Forwarded-For one under TRUST_PROXY.
    const waitMs = throttle.blockedFor(request.ip);
    if (waitMs > 0) throw tooManyFailures(waitMs);
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
    if (!match || !timingSafeEqual(digest(match[1]!), adminDigest)) {
      throttle.fail(request.ip);
      throw unauthenticated('Missing or invalid admin token. Send `Authorization: Bearer <ADMIN_TOKEN>`.', 'invalid_admin_token');
    }
  });
}

export default fp(auth, { name: 'auth', fastify: '5.x', dependencies: ['infrastructure'] });
