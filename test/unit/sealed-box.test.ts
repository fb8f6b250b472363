import assert from 'node:assert/strict';
import { createSealedBox, generateEncryptionKey, parseEncryptionKey } from '../../src/crypto/sealed-box';

describe('sealed box (credentials at rest)', () => {
  const box = createSealedBox(parseEncryptionKey(generateEncryptionKey()));

  it('opens what it sealed, with the same context', () => {
    const sealed = box.seal('{"access_token":"secret"}', 'user-1');
    assert.ok(!sealed.includes('secret'));
    assert.equal(box.open(sealed, 'user-1'), '{"access_token":"secret"}');
  });

  it('uses a fresh nonce each time', () => {
    assert.notEqual(box.seal('same', 'ctx'), box.seal('same', 'ctx'));
  });

  it('refuses another context, a tampered box and another key', () => {
    const sealed = box.seal('secret', 'user-1');
    assert.throws(() => box.open(sealed, 'user-2'));
    const parts = sealed.split('.');
    parts[2] = Buffer.from('tampered').toString('base64url');
    assert.throws(() => box.open(parts.join('.'), 'user-1'));
    const other = createSealedBox(parseEncryptionKey(generateEncryptionKey()));
    assert.throws(() => other.open(sealed, 'user-1'));
    assert.throws(() => box.open('not-a-box', 'user-1'), /not a sealed box/);
  });

  it('refuses a box whose tag was shortened, which GCM would verify', () => {
    const parts = box.seal('secret', 'user-1').split('.');
    for (const bytes of [4, 8, 12, 15]) {
      const shortened = [...parts.slice(0, 3), Buffer.from(parts[3]!, 'base64url').subarray(0, bytes).toString('base64url')].join('.');
      assert.throws(() => box.open(shortened, 'user-1'), /not a sealed box/, `a ${bytes}-byte tag`);
    }
  });

  it('accepts keys as hex or base64 and refuses other lengths', () => {
    assert.equal(parseEncryptionKey('ab'.repeat(32)).length, 32);
    assert.throws(() => parseEncryptionKey('abc'), /32 bytes/);
  });
});
