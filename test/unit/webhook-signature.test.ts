import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { signWebhook, webhookHeaders } from '../../src/webhooks/signature';
import { newWebhookSecret } from '../../src/webhooks/secrets';

describe('Webhook signatures (Standard Webhooks 1.0)', () => {
  it('reproduces the specification test vector', () => {
    const signature = signWebhook(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    assert.equal(signature, 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('the standardwebhooks package verifies our headers with either secret of a rotation, and refuses a changed body', () => {
    const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
    const body = JSON.stringify({ id: 'evt_01JD00000000000000000000AB', type: 'post.published', data: { text: 'héllo' } });
    const now = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([newSecret, oldSecret], 'evt_01JD00000000000000000000AB', now, body);
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    for (const secret of [oldSecret, newSecret]) assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers));
    assert.throws(() => new Webhook(newSecret).verify(body.replace('héllo', 'hello'), headers));
  });
});
