// Secrets a bare install creates for itself on first start and reuses afterwards:
// the encryption key for stored provider keys and a self-signed TLS certificate.
import { randomBytes, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { createSecretBox, decodeEncryptionKey, type SecretBox } from './secret-box.js';

type KeyConfig = Pick<Config, 'encryptionKey' | 'encryptionKeyFile' | 'previousEncryptionKeys'>;

export async function loadSecretBox(config: KeyConfig): Promise<SecretBox> {
  const current = config.encryptionKey
    ? decodeEncryptionKey(config.encryptionKey, 'ENCRYPTION_KEY')
    : await generatedEncryptionKey(config.encryptionKeyFile);
  const previous = config.previousEncryptionKeys.map((k, i) => decodeEncryptionKey(k, `ENCRYPTION_KEY_PREVIOUS[${i}]`));
  return createSecretBox(current, previous);
}

/** Where the encryption key comes from, in words, for the start-up log. */
export function describeEncryptionKey(config: KeyConfig): string {
  return config.encryptionKey ? 'from ENCRYPTION_KEY' : `in ${path.resolve(config.encryptionKeyFile)}`;
}

/** Read from the key file; generated into it on first start. */
async function generatedEncryptionKey(keyFile: string): Promise<Buffer> {
  const file = path.resolve(keyFile);
  const existing = await readIfExists(file);
  if (existing !== null) return decodeEncryptionKey(existing, file);
  await mkdir(path.dirname(file), { recursive: true });
  const key = randomBytes(32);
  // 'wx' refuses to overwrite: two processes starting at once must not replace each other's key.
  await writeFile(file, key.toString('base64'), { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return decodeEncryptionKey((await readFile(file, 'utf8')).trim(), file);
}

export interface TlsMaterial {
  cert: string;
  key: string;
  /** Where they are, for the start-up log; `generated` when this install made them. */
  certFile: string;
  keyFile: string;
  generated: boolean;
}

export async function loadTlsMaterial(config: Pick<Config, 'tls' | 'dataDir' | 'selfSignedHosts'>): Promise<TlsMaterial> {
  if (config.tls) {
    const { certFile, keyFile } = config.tls;
    return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8'), certFile, keyFile, generated: false };
  }
  const dir = path.resolve(config.dataDir, 'tls');
  const certFile = path.join(dir, 'localhost.crt');
  const keyFile = path.join(dir, 'localhost.key');
  const hosts = ['localhost', '127.0.0.1', '::1', ...config.selfSignedHosts];
  const [cert, key] = await Promise.all([readIfExists(certFile), readIfExists(keyFile)]);
  // A stored certificate is kept while it covers every name asked for; a new name makes a new one.
  if (cert && key && covers(cert, hosts)) return { cert, key, certFile, keyFile, generated: true };

  const generated = await generateSelfSignedCertificate(hosts);
  await mkdir(dir, { recursive: true });
  await writeFile(keyFile, generated.key, { mode: 0o600 });
  await writeFile(certFile, generated.cert, { mode: 0o644 });
  return { ...generated, certFile, keyFile, generated: true };
}

function covers(pem: string, hosts: string[]): boolean {
  const cert = new X509Certificate(pem);
  return hosts.every((host) => (isIP(host) ? cert.checkIP(host) : cert.checkHost(host, { wildcards: false })) !== undefined);
}

async function generateSelfSignedCertificate(hosts: string[]): Promise<{ cert: string; key: string }> {
  const notBeforeDate = new Date();
  const notAfterDate = new Date(notBeforeDate.getTime() + 825 * 24 * 3600 * 1000);
  // Loaded only when a certificate is made: it is the slowest module to load, and rarely needed.
  const { default: selfsigned } = await import('selfsigned');
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [...new Set(hosts)].map((host) => (isIP(host) ? { type: 7, ip: host } : { type: 2, value: host })),
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

async function readIfExists(file: string): Promise<string | null> {
  try {
    return (await readFile(file, 'utf8')).trim() || null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
