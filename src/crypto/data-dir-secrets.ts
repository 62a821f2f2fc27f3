// Secrets a bare install creates for itself on first start and reuses afterwards:
// the encryption key for stored provider keys and a self-signed TLS certificate.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { createSecretBox, decodeEncryptionKey, type SecretBox } from './secret-box.js';

export async function loadSecretBox(config: Pick<Config, 'encryptionKey' | 'previousEncryptionKeys' | 'dataDir'>): Promise<SecretBox> {
  const current = config.encryptionKey
    ? decodeEncryptionKey(config.encryptionKey, 'ENCRYPTION_KEY')
    : await generatedEncryptionKey(config.dataDir);
  const previous = config.previousEncryptionKeys.map((k, i) => decodeEncryptionKey(k, `ENCRYPTION_KEY_PREVIOUS[${i}]`));
  return createSecretBox(current, previous);
}

async function generatedEncryptionKey(dataDir: string): Promise<Buffer> {
  const file = path.resolve(dataDir, 'encryption.key');
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
}

export async function loadTlsMaterial(config: Pick<Config, 'tls' | 'dataDir'>): Promise<TlsMaterial> {
  if (config.tls) {
    return { cert: await readFile(config.tls.certFile, 'utf8'), key: await readFile(config.tls.keyFile, 'utf8') };
  }
  const dir = path.resolve(config.dataDir, 'tls');
  const certFile = path.join(dir, 'localhost.crt');
  const keyFile = path.join(dir, 'localhost.key');
  const [cert, key] = await Promise.all([readIfExists(certFile), readIfExists(keyFile)]);
  if (cert && key) return { cert, key };

  const generated = await generateLocalhostCertificate();
  await mkdir(dir, { recursive: true });
  await writeFile(keyFile, generated.key, { mode: 0o600 });
  await writeFile(certFile, generated.cert, { mode: 0o644 });
  return generated;
}

async function generateLocalhostCertificate(): Promise<TlsMaterial> {
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
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
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
