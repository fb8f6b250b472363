import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_users';
import * as m0002 from './0002_api_keys';
import * as m0003 from './0003_idempotency_keys';
import * as m0004 from './0004_rate_limits';
import * as m0010 from './0010_accounts';
import * as m0011 from './0011_accounts_disconnect';
import * as m0020 from './0020_posts';
import * as m0030 from './0030_media';
import * as m0040 from './0040_post_publishing';
import * as m0050 from './0050_publish_attempts';
import * as m0051 from './0051_post_change_notifications';
import * as m0052 from './0052_post_publishing_workflow';
import * as m0053 from './0053_first_comment_attempts';
import * as m0054 from './0054_idempotency_response_text';
import * as m0060 from './0060_comments';
import * as m0070 from './0070_post_analytics';
import * as m0075 from './0075_account_credential_lifetime';
import * as m0085 from './0085_posts_listing_indexes';
import * as m0086 from './0086_rate_limits_unlogged';
import * as m0090 from './0090_events_outbox';
import * as m0091 from './0091_webhook_endpoints';
import * as m0092 from './0092_webhook_deliveries';
import * as m0093 from './0093_event_dispatch';
import * as m0094 from './0094_webhook_dispatches';
import * as m0140 from './0140_refuse_function';
import * as m0150 from './0150_right_growing_indexes';
import * as m0160 from './0160_key_change_notifications';
import * as m0170 from './0170_post_removal_notifications';
import * as m0180 from './0180_quota_reservations_compact';
import * as m0190 from './0190_partial_unit_indexes';
import * as m0200 from './0200_comments_unreported';
import * as m0210 from './0210_post_url_unread';
import * as m0220 from './0220_post_next_attempt';
import * as m0230 from './0230_scheduled_spacing';
import * as m0240 from './0240_webhook_retired_secrets';
import * as m0250 from './0250_publish_attempt_handle';
import * as m0251 from './0251_idempotency_claims';
import * as m0252 from './0252_post_schedule_version';
import * as m0253 from './0253_first_comment_left_index';
import * as m0261 from './0261_reply_attempts';
import * as m0262 from './0262_analytics_failed_read_floor';
import * as m0264 from './0264_comment_sync_claims';
import * as m0271 from './0271_comment_reply_charge';
import * as m0273 from './0273_overage_phantoms_repaired';
import * as m0275 from './0275_credential_refusals';
import * as m0276 from './0276_publish_attempt_first';
import * as m0278 from './0278_credential_refusal_release';
import * as m0279 from './0279_reply_attempt_looks';
import * as m0284 from './0284_credential_refusal_first';
import * as m0285 from './0285_reply_attempt_untold';
import * as m0288 from './0288_account_call_refusal';
import * as m0291 from './0291_idempotency_made';
import * as m0297 from './0297_posts_index_writes';

/**
 * Every migration, in order, listed explicitly (no directory scanning, so the compiled build needs nothing else).
 * Names are `NNNN_name`; Kysely applies them in name order and records each in `kysely_migration`.
 */
export const migrations: Record<string, Migration> = {
  '0001_users': m0001,
  '0002_api_keys': m0002,
  '0003_idempotency_keys': m0003,
  '0004_rate_limits': m0004,
  '0010_accounts': m0010,
  '0011_accounts_disconnect': m0011,
  '0020_posts': m0020,
  '0030_media': m0030,
  '0040_post_publishing': m0040,
  '0050_publish_attempts': m0050,
  '0051_post_change_notifications': m0051,
  '0052_post_publishing_workflow': m0052,
  '0053_first_comment_attempts': m0053,
  '0054_idempotency_response_text': m0054,
  '0060_comments': m0060,
  '0070_post_analytics': m0070,
  '0075_account_credential_lifetime': m0075,
  '0085_posts_listing_indexes': m0085,
  '0086_rate_limits_unlogged': m0086,
  '0090_events_outbox': m0090,
  '0091_webhook_endpoints': m0091,
  '0092_webhook_deliveries': m0092,
  '0093_event_dispatch': m0093,
  '0094_webhook_dispatches': m0094,
  '0140_refuse_function': m0140,
  '0150_right_growing_indexes': m0150,
  '0160_key_change_notifications': m0160,
  '0170_post_removal_notifications': m0170,
  '0180_quota_reservations_compact': m0180,
  '0190_partial_unit_indexes': m0190,
  '0200_comments_unreported': m0200,
  '0210_post_url_unread': m0210,
  '0220_post_next_attempt': m0220,
  '0230_scheduled_spacing': m0230,
  '0240_webhook_retired_secrets': m0240,
  '0250_publish_attempt_handle': m0250,
  '0251_idempotency_claims': m0251,
  '0252_post_schedule_version': m0252,
  '0253_first_comment_left_index': m0253,
  '0261_reply_attempts': m0261,
  '0262_analytics_failed_read_floor': m0262,
  '0264_comment_sync_claims': m0264,
  '0271_comment_reply_charge': m0271,
  '0273_overage_phantoms_repaired': m0273,
  '0275_credential_refusals': m0275,
  '0276_publish_attempt_first': m0276,
  '0278_credential_refusal_release': m0278,
  '0279_reply_attempt_looks': m0279,
  '0284_credential_refusal_first': m0284,
  '0285_reply_attempt_untold': m0285,
  '0288_account_call_refusal': m0288,
  '0291_idempotency_made': m0291,
  '0297_posts_index_writes': m0297,
};
