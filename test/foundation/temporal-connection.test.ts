import assert from 'node:assert/strict';
import { grpcCompressionFor } from '../../src/temporal/worker';

describe('Temporal connection', () => {
  it('turns gRPC compression off for a server on this machine and keeps gzip for one elsewhere', () => {
    for (const local of ['127.0.0.1:7233', 'localhost:40123', 'LOCALHOST:1', '[::1]:7233', '127.0.0.53:7233']) {
      assert.deepEqual(grpcCompressionFor(local), { codec: 'none' }, local);
    }
    for (const remote of ['temporal:7233', '10.0.0.5:7233', 'my-ns.tmprl.cloud:7233', '[2001:db8::1]:7233', '127.example.com:7233']) {
      assert.deepEqual(grpcCompressionFor(remote), { codec: 'gzip' }, remote);
    }
  });
});
