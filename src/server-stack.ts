// What src/server.ts needs to serve HTTP, loaded only after it has started opening the database:
// loading these modules takes about half a second of the main thread, which the embedded
// database's thread spends opening in parallel on the other core.
export { default as Fastify } from 'fastify';
export { default as app } from './app.js';
export { loadSchemaCompilers } from './http/lazy-schemas.js';
export { fastifyOptions, requestReceiptOptions } from './server-options.js';
export { answerOnlyInEnvelope } from './transport/envelope-only.js';
export { createHttpsOnlyServer, httpsRequired } from './transport/https-only.js';
