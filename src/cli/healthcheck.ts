// Container health probe: exits 0 when this machine's server answers /readyz, which also
// asks the database, so a container whose database is gone is reported unhealthy.
// Uses no shell tools (the image has no curl), and trusts the local self-signed certificate.
import http from 'node:http';
import https from 'node:https';
import { loadConfig } from '../config.js';
import { loadEnvFile } from '../env-file.js';

loadEnvFile();

const config = loadConfig();
const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
const client = config.trustProxy ? http : https;
const request = client.get({ host, port: config.port, path: '/readyz', rejectUnauthorized: false, timeout: 3000 }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
request.on('timeout', () => request.destroy());
request.on('error', () => process.exit(1));
