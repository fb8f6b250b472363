import crypto from 'node:crypto';

/**
 * Authenticated encryption for secrets at rest (platform credentials): AES-256-GCM with a random 96-bit nonce.
 * Sealed form: `v1.<nonce b64url>.<ciphertext b64url>.<tag b64url>`; the version prefix lets a later key rotation
 * tell old boxes from new. `context` is bound as associated data, so a box opens only with the context it was sealed
 * with: a box copied onto a row of another context does not open, one copied onto a row of the same context does.
 * Account credentials are bound to the owner's user id only (another user's row does not open them; another account
 * of the same user does, README "Accounts"); webhook secrets to their endpoint.
 */

const VERSION = 'v1';
const TAG_BYTES = 16;

export interface SealedBox {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

export function createSealedBox(key: Buffer): SealedBox {
  if (key.length !== 32) throw new Error('the encryption key must be 32 bytes');
  return {
    seal(plaintext, context) {
      const nonce = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, nonce, ciphertext, cipher.getAuthTag()].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
    },
    open(sealed, context) {
      const [version, nonce, ciphertext, tag] = sealed.split('.');
      if (version !== VERSION || !nonce || ciphertext === undefined || !tag) throw new Error('not a sealed box');
      const authTag = Buffer.from(tag, 'base64url');
      // A full 16-byte tag only: GCM verifies a shortened one too, and each byte less halves a forger's work.
      if (authTag.length !== TAG_BYTES) throw new Error('not a sealed box');
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(authTag);
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** Parses HERALD_ENCRYPTION_KEY: 32 bytes as base64 (44 chars) or hex (64 chars). */
export function parseEncryptionKey(raw: string): Buffer {
  const trimmed = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('HERALD_ENCRYPTION_KEY must be 32 bytes, given as 64 hex characters or base64');
  return key;
}

export function generateEncryptionKey(): string {
  return crypto.randomBytes(32).toString('base64');
}
