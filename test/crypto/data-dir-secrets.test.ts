// The secrets a bare install makes for itself: where they go, and when they are made anew.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { loadSecretBox, loadTlsMaterial } from '../../src/crypto/data-dir-secrets.js';

const tempDir = () => mkdtempSync(path.join(tmpdir(), 'ladder-secrets-'));

describe('generated secrets', () => {
  it('keeps the encryption key in ENCRYPTION_KEY_FILE, outside DATA_DIR, made once with mode 0600', async () => {
    const secrets = tempDir();
    const keyFile = path.join(secrets, 'encryption.key');
    const config = loadConfig({ DATA_DIR: tempDir(), ENCRYPTION_KEY_FILE: keyFile });
    expect(config.encryptionKeyFile).toBe(keyFile);
    const box = await loadSecretBox(config);
    const key = readFileSync(keyFile, 'utf8');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const sealed = box.seal('sk-secret', 'ctx');
    expect((await loadSecretBox(config)).open(sealed, 'ctx')).toBe('sk-secret');
    expect(readFileSync(keyFile, 'utf8')).toBe(key);
    expect(() => loadConfig({ ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'), ENCRYPTION_KEY_FILE: keyFile })).toThrow(ConfigError);
    expect(loadConfig({ DATA_DIR: '/srv/ladder' }).encryptionKeyFile).toBe('/srv/ladder/encryption.key');
  });

  it('makes the self-signed certificate for TLS_SELF_SIGNED_HOSTS too, and anew when a name is added', async () => {
    const dataDir = tempDir();
    const first = await loadTlsMaterial(loadConfig({ DATA_DIR: dataDir }));
    expect(first).toMatchObject({ certFile: path.join(path.resolve(dataDir), 'tls', 'localhost.crt'), generated: true });
    expect(new X509Certificate(first.cert).checkHost('ladder.example.test')).toBeUndefined();
    expect((await loadTlsMaterial(loadConfig({ DATA_DIR: dataDir }))).cert).toBe(first.cert);

    const config = loadConfig({ DATA_DIR: dataDir, TLS_SELF_SIGNED_HOSTS: 'ladder.example.test, 10.1.2.3' });
    const second = await loadTlsMaterial(config);
    const cert = new X509Certificate(second.cert);
    expect(cert.checkHost('ladder.example.test')).toBe('ladder.example.test');
    expect(cert.checkIP('10.1.2.3')).toBe('10.1.2.3');
    expect(cert.checkHost('localhost')).toBe('localhost');
    expect(readFileSync(second.certFile, 'utf8').trim()).toBe(second.cert.trim());
    expect((await loadTlsMaterial(config)).cert).toBe(second.cert);
  });
});

describe('settings from files (Docker secrets)', () => {
  it('reads DATABASE_URL_FILE and ADMIN_TOKEN_FILE when the variables themselves are unset', async () => {
    const { writeFileSync } = await import('node:fs');
    const dir = tempDir();
    writeFileSync(path.join(dir, 'url'), 'postgres://ladder:pw@db:5432/ladder\n');
    writeFileSync(path.join(dir, 'token'), 'a-long-admin-token-from-a-file\n');
    const config = loadConfig({ DATABASE_URL_FILE: path.join(dir, 'url'), ADMIN_TOKEN_FILE: path.join(dir, 'token') });
    expect(config).toMatchObject({ databaseUrl: 'postgres://ladder:pw@db:5432/ladder', adminToken: 'a-long-admin-token-from-a-file' });
    expect(loadConfig({ ADMIN_TOKEN: 'the-variable-wins-over-the-file', ADMIN_TOKEN_FILE: path.join(dir, 'token') }).adminToken).toBe('the-variable-wins-over-the-file');
    expect(() => loadConfig({ ADMIN_TOKEN_FILE: path.join(dir, 'missing') })).toThrow(/ADMIN_TOKEN_FILE=".*missing": cannot be read \(ENOENT\)/);
  });
});
