import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox, decodeEncryptionKey, keyId, SecretUnavailableError } from '../../src/crypto/secret-box.js';
import { apiKeyMatches, apiKeyPrefix, generateApiKey, hashApiKey } from '../../src/crypto/api-keys.js';

describe('secret box', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);

  it('seals to a tagged ciphertext that does not contain the plaintext, and opens it', () => {
    const box = createSecretBox(keyA);
    const sealed = box.seal('sk-live-provider-key', 'ctx');
    expect(sealed).toMatch(new RegExp(`^v1\\.${keyId(keyA)}\\.[\\w-]+\\.[\\w-]+\\.[\\w-]+$`));
    expect(sealed).not.toContain('sk-live');
    expect(box.open(sealed, 'ctx')).toBe('sk-live-provider-key');
    expect(box.seal('same', 'ctx')).not.toBe(box.seal('same', 'ctx'));
  });

  it('refuses a ciphertext moved to another owner (context) or tampered with', () => {
    const box = createSecretBox(keyA);
    const sealed = box.seal('secret', 'account-1');
    expect(() => box.open(sealed, 'account-2')).toThrow(SecretUnavailableError);
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('AA') ? 'BB' : 'AA');
    expect(() => box.open(tampered, 'account-1')).toThrow(`failed authentication under encryption key ${keyId(keyA)}`);
  });

  it('opens secrets sealed with a previous key and marks them stale', () => {
    const old = createSecretBox(keyA).seal('secret', 'c');
    const rotated = createSecretBox(keyB, [keyA]);
    expect(rotated.open(old, 'c')).toBe('secret');
    expect(rotated.isStale(old)).toBe(true);
    expect(rotated.isStale(rotated.seal('secret', 'c'))).toBe(false);
  });

  it('says which key is missing when a secret was sealed with an unknown key', () => {
    const old = createSecretBox(keyA).seal('secret', 'c');
    expect(() => createSecretBox(keyB).open(old, 'c')).toThrow(
      `stored secret was sealed with encryption key ${keyId(keyA)}, which is not configured`,
    );
  });

  it('accepts only base64 of exactly 32 bytes as a key', () => {
    expect(decodeEncryptionKey(keyA.toString('base64'), 'K')).toEqual(keyA);
    expect(() => decodeEncryptionKey(randomBytes(16).toString('base64'), 'K')).toThrow('K must be the base64 encoding of exactly 32 bytes');
    expect(() => decodeEncryptionKey('not base64!', 'K')).toThrow('K must be');
  });
});

describe('API keys', () => {
  it('generates recognisable high-entropy keys whose prefix finds them', () => {
    const { key, prefix, hash } = generateApiKey();
    expect(key).toMatch(/^ldr_live_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    expect(key.startsWith(prefix)).toBe(true);
    expect(apiKeyPrefix(key)).toBe(prefix);
    expect(hash).toBe(hashApiKey(key));
    expect(hash).not.toContain(key.slice(prefix.length + 1));
    expect(generateApiKey().key).not.toBe(key);
  });

  it('matches only the exact key', () => {
    const { key, hash } = generateApiKey();
    expect(apiKeyMatches(key, hash)).toBe(true);
    expect(apiKeyMatches(`${key.slice(0, -1)}x`, hash)).toBe(key.endsWith('x'));
    expect(apiKeyPrefix('sk-not-ours')).toBeNull();
    expect(apiKeyPrefix(`${key} `)).toBeNull();
  });
});
