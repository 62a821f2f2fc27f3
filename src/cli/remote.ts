// When a running server holds the embedded database (one process at a time), commands go
// through that server's admin API instead. Where it listens, how to trust it and the token
// all come from the same settings and DATA_DIR the server reads, so nothing extra is asked;
// when something is missing, the error says exactly what.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { Config } from '../config.js';
import { ApiError, type ErrorBody, type ErrorType } from '../errors.js';

export interface AdminApi {
  /** The server's base URL, for messages. */
  url: string;
  /** `path` below /v1/admin; resolves with the parsed answer, rejects with the server's ApiError. */
  call<T = unknown>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T>;
}

/** Something the CLI needs to reach the server is missing or wrong; the message says what. */
export class ServerUnreachableError extends Error {
  override readonly name = 'ServerUnreachableError';
}

const TIMEOUT_MS = 30_000;

type Settings = Pick<Config, 'host' | 'port' | 'dataDir' | 'tls' | 'trustProxy' | 'adminToken'>;

export function adminApiOf(config: Settings, holderPid: number): AdminApi {
  const held = `The embedded database in ${config.dataDir} is in use by process ${holderPid} (a running server), so this command goes through its admin API`;
  if (!config.adminToken) {
    throw new ServerUnreachableError(
      `${held}, which needs its admin token: set ADMIN_TOKEN (or ADMIN_TOKEN_FILE) here, in the environment or ./.env, to the value the server was started with. ` +
        'A server started without one has no admin API: stop it to use the database directly, or restart it with ADMIN_TOKEN.',
    );
  }
  if (config.port === 0) {
    throw new ServerUnreachableError(`${held}, but PORT is 0 (any free port), so its address is not known here: set PORT to the port the server listens on.`);
  }
  const host = connectHost(config.host);
  const scheme = config.trustProxy ? 'http' : 'https';
  const url = `${scheme}://${isIP(host) === 6 ? `[${host}]` : host}:${config.port}`;
  const trust = config.trustProxy ? null : trustOf(config, held);
  const token = config.adminToken;

  return {
    url,
    call: (method, route, body) =>
      new Promise((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
        // Behind TRUST_PROXY the server takes only requests the proxy marked as HTTPS; this one comes from the same host.
        if (config.trustProxy) headers['x-forwarded-proto'] = 'https';
        if (payload !== undefined) headers['content-type'] = 'application/json';
        const options = { method, headers, timeout: TIMEOUT_MS, agent: false as const, ...(trust ?? {}) };
        const request = (scheme === 'https' ? https : http).request(`${url}/v1/admin${route}`, options, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            try {
              const parsed: unknown = text ? JSON.parse(text) : {};
              if (res.statusCode! < 300) resolve(parsed as never);
              else reject(serverError(res.statusCode!, parsed, url, config.adminToken !== null));
            } catch {
              reject(new ServerUnreachableError(`${held}, but ${url} answered ${res.statusCode} with a body that is not JSON: is it the server?`));
            }
          });
        });
        request.on('timeout', () => request.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
        request.on('error', (error: NodeJS.ErrnoException) =>
          reject(
            new ServerUnreachableError(
              `${held}, but it could not be reached at ${url} (from HOST and PORT${config.trustProxy ? ', plain http under TRUST_PROXY' : ''}): ` +
                `${error.code ?? error.message}. Set HOST and PORT here as the server has them, or stop the server to use the database directly.`,
            ),
          ),
        );
        request.end(payload);
      }),
  };
}

/** A server listening on every address is reached on loopback. */
function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

/**
 * The server's own certificate (TLS_CERT_FILE, else the one it generated in DATA_DIR/tls) is
 * trusted beside the system's roots, and accepted for whatever name it carries: it is the
 * certificate the settings name, reached on an address of this host.
 */
function trustOf(config: Settings, held: string): Pick<https.RequestOptions, 'ca' | 'checkServerIdentity'> {
  const file = config.tls?.certFile ?? path.join(path.resolve(config.dataDir), 'tls', 'localhost.crt');
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ServerUnreachableError(`${held}, but its certificate ${file} cannot be read (${(error as NodeJS.ErrnoException).code}): set TLS_CERT_FILE or DATA_DIR as the server has them.`);
  }
  const fingerprint = new X509Certificate(pem).fingerprint256;
  return {
    ca: [...tls.rootCertificates, pem],
    checkServerIdentity: (hostname, cert) => (cert.fingerprint256 === fingerprint ? undefined : tls.checkServerIdentity(hostname, cert)),
  };
}

function serverError(status: number, parsed: unknown, url: string, tokenSet: boolean): Error {
  const error = (parsed as Partial<ErrorBody>).error;
  if (!error || typeof error.code !== 'string') return new ServerUnreachableError(`${url} answered ${status} without an error body: is it the server?`);
  if (error.code === 'unknown_route' && status === 404) {
    return new ServerUnreachableError(
      `The server at ${url} answered 404 unknown_route: it has no admin API (it was started without ADMIN_TOKEN), or is an older version without this route. Restart it with ADMIN_TOKEN, or stop it to use the database directly.`,
    );
  }
  const hint = error.code === 'invalid_admin_token' && tokenSet ? ' (ADMIN_TOKEN here is not the one the server was started with)' : '';
  return new ApiError(status, error.type as ErrorType, error.code, `${error.message}${hint}`, error.param ?? null);
}
