// We never decode request bodies, so a compressed one must be refused rather than read as if
// it were plain JSON (a body labelled gzip that is not gzip was taken as is). Checked where
// Fastify checks the Content-Type, after authentication and before the body is read.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { unsupportedContentEncoding } from '../errors.js';

const hasBody = (request: FastifyRequest) =>
  request.headers['transfer-encoding'] !== undefined ||
  (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0');

/** `identity` (any case), possibly listed more than once, means no encoding at all. */
const isIdentity = (encoding: string) => encoding.split(',').every((token) => /^\s*(identity)?\s*$/i.test(token));

async function requestEncoding(app: FastifyInstance) {
  app.addHook('preParsing', async (request, _reply, payload) => {
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && hasBody(request) && !isIdentity(encoding)) throw unsupportedContentEncoding(encoding);
    return payload;
  });
}

export default fp(requestEncoding, { name: 'request-encoding', fastify: '5.x', dependencies: ['errors'] });
