import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors';

/** Asserts the whole error envelope (and status) an operation is refused with. */
export async function rejectsWith(promise: Promise<unknown> | (() => unknown), status: number, code: string, message: string): Promise<void> {
  await assert.rejects(
    typeof promise === 'function' ? async () => promise() : promise,
    (err: unknown) => {
      assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
      assert.deepEqual({ status: err.status, body: err.toEnvelope() }, { status, body: { error: { code, message } } });
      return true;
    },
  );
}
