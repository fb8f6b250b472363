import assert from 'node:assert/strict';
import {
  checkScheduleInFuture,
  checkScheduleSpacing,
  checkTimezone,
  parseScheduleAt,
  scheduleInPastNotice,
} from '../../src/posts/rules/schedule';

function instant(input: Parameters<typeof parseScheduleAt>[0]): string {
  const parsed = parseScheduleAt(input);
  if (!parsed.ok) assert.fail(`refused: ${parsed.violation.message}`);
  return parsed.iso;
}

function refusal(input: Parameters<typeof parseScheduleAt>[0]): unknown {
  const parsed = parseScheduleAt(input);
  return parsed.ok ? { accepted: parsed.iso } : parsed.violation;
}

const bad = (message: string) => ({ code: 'bad_request', message });

describe('posts rules: schedule_at and timezone', () => {
  describe('absolute instants', () => {
    it('normalises Z and offsets to UTC with millisecond precision', () => {
      assert.equal(instant({ scheduleAt: '2026-05-01T09:30:00Z' }), '2026-05-01T09:30:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-05-01T09:30:00+02:00' }), '2026-05-01T07:30:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-05-01T09:30-0530' }), '2026-05-01T15:00:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-05-01T09:30:00.123456Z' }), '2026-05-01T09:30:00.123Z');
      assert.equal(instant({ scheduleAt: '2026-05-01 09:30:00Z' }), '2026-05-01T09:30:00.000Z');
    });

    it('ignores timezone when an offset is given, but still validates it', () => {
      assert.equal(instant({ scheduleAt: '2026-05-01T09:30:00Z', timezone: 'Asia/Tokyo' }), '2026-05-01T09:30:00.000Z');
      assert.deepEqual(
        refusal({ scheduleAt: '2026-05-01T09:30:00Z', timezone: 'Mars/Olympus' }),
        bad('timezone Mars/Olympus is not an IANA time zone name (for example Europe/Berlin or America/New_York)'),
      );
    });
  });

  describe('local times', () => {
    it('reads a local time in timezone, else the account timezone', () => {
      assert.equal(instant({ scheduleAt: '2026-07-01T09:00', timezone: 'Europe/Berlin' }), '2026-07-01T07:00:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-01-15T09:00', timezone: 'Europe/Berlin' }), '2026-01-15T08:00:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-07-01T09:00', accountTimezone: 'America/New_York' }), '2026-07-01T13:00:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-07-01T09:00', timezone: 'Asia/Tokyo', accountTimezone: 'America/New_York' }), '2026-07-01T00:00:00.000Z');
    });

    it('works out daylight saving for the date named (New York, both sides of 2026-03-08)', () => {
      assert.equal(instant({ scheduleAt: '2026-03-07T12:00', timezone: 'America/New_York' }), '2026-03-07T17:00:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-03-09T12:00', timezone: 'America/New_York' }), '2026-03-09T16:00:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-03-08T01:59', timezone: 'America/New_York' }), '2026-03-08T06:59:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-03-08T03:00', timezone: 'America/New_York' }), '2026-03-08T07:00:00.000Z');
    });

    it('refuses a wall time skipped by spring forward', () => {
      assert.deepEqual(
        refusal({ scheduleAt: '2026-03-08T02:30', timezone: 'America/New_York' }),
        bad('schedule_at 2026-03-08T02:30 does not exist in America/New_York: the clocks skip that time (daylight saving)'),
      );
      assert.deepEqual(
        refusal({ scheduleAt: '2026-03-29T02:15:00', accountTimezone: 'Europe/Berlin' }),
        bad('schedule_at 2026-03-29T02:15:00 does not exist in Europe/Berlin: the clocks skip that time (daylight saving)'),
      );
    });

    it('takes the first occurrence of a wall time that happens twice (fall back)', () => {
      // 01:30 EDT (UTC-4) comes before 01:30 EST (UTC-5).
      assert.equal(instant({ scheduleAt: '2026-11-01T01:30', timezone: 'America/New_York' }), '2026-11-01T05:30:00.000Z');
      // 02:30 CEST (UTC+2) comes before 02:30 CET (UTC+1).
      assert.equal(instant({ scheduleAt: '2026-10-25T02:30', timezone: 'Europe/Berlin' }), '2026-10-25T00:30:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-10-25T03:00', timezone: 'Europe/Berlin' }), '2026-10-25T02:00:00.000Z');
    });

    it('refuses a local time with no timezone anywhere', () => {
      assert.deepEqual(
        refusal({ scheduleAt: '2026-07-01T09:00', accountTimezone: null }),
        bad("schedule_at 2026-07-01T09:00 has no offset and no timezone applies; add Z or an offset, send timezone, or set the account's timezone"),
      );
    });
  });

  describe('what is not a moment', () => {
    const notReal = (s: string) => bad(`schedule_at ${s} is not a real moment`);
    it('refuses dates and hours that do not exist', () => {
      assert.deepEqual(refusal({ scheduleAt: '2026-02-30T10:00:00Z' }), notReal('2026-02-30T10:00:00Z'));
      assert.deepEqual(refusal({ scheduleAt: '2026-02-29T10:00:00Z' }), notReal('2026-02-29T10:00:00Z'));
      assert.deepEqual(refusal({ scheduleAt: '2026-03-01T25:00:00Z' }), notReal('2026-03-01T25:00:00Z'));
      assert.deepEqual(refusal({ scheduleAt: '2026-03-01T24:00', timezone: 'UTC' }), notReal('2026-03-01T24:00'));
      assert.deepEqual(refusal({ scheduleAt: '2026-04-31T10:00', timezone: 'UTC' }), notReal('2026-04-31T10:00'));
      assert.deepEqual(refusal({ scheduleAt: '2026-03-01T10:60:00Z' }), notReal('2026-03-01T10:60:00Z'));
      assert.equal(instant({ scheduleAt: '2028-02-29T10:00:00Z' }), '2028-02-29T10:00:00.000Z');
    });

    it('refuses offsets outside RFC 3339 (hours 00 to 23, minutes 00 to 59) and takes every offset inside', () => {
      for (const s of ['2026-05-01T10:00+05:99', '2026-05-01T10:00+25:00', '2026-05-01T10:00-24:00', '2026-05-01T10:00:00+2500', '2026-05-01T10:00+05:60', '2026-05-01T10:00+99']) {
        assert.deepEqual(refusal({ scheduleAt: s }), notReal(s));
      }
      assert.equal(instant({ scheduleAt: '2026-05-01T10:00+23:59' }), '2026-04-30T10:01:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-05-01T10:00-23:59' }), '2026-05-02T09:59:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-05-01T10:00+14:00' }), '2026-04-30T20:00:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-05-01T10:00:00+0545' }), '2026-05-01T04:15:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-05-01T10:00-12' }), '2026-05-01T22:00:00.000Z');
      assert.equal(instant({ scheduleAt: '2026-05-01T10:00-00:00' }), '2026-05-01T10:00:00.000Z');
    });

    it('refuses relative offsets', () => {
      for (const s of ['+30m', '+2h', 'now+1h', '-5 minutes', 'PT30M']) {
        assert.deepEqual(refusal({ scheduleAt: s }), bad(`schedule_at must be an ISO 8601 date and time; relative offsets like ${s} are not accepted`));
      }
    });

    it('refuses other shapes', () => {
      for (const s of ['tomorrow', '2026-05-01', '05/01/2026 10:00', '']) {
        assert.deepEqual(
          refusal({ scheduleAt: s }),
          bad(`schedule_at ${s} is not an ISO 8601 date and time (for example 2026-05-01T09:30:00Z or 2026-05-01T09:30 with a timezone)`),
        );
      }
    });
  });

  describe('timezone', () => {
    it('accepts IANA names (the database\'s fixed Etc/GMT zones too), refuses offsets and unknown names', () => {
      for (const tz of ['Europe/Berlin', 'America/New_York', 'UTC', 'Asia/Kolkata', 'Etc/GMT+5', 'Etc/GMT-14', 'GMT+0']) assert.equal(checkTimezone(tz), null);
      for (const tz of ['+02:00', 'UTC+2', 'GMT-05:00', 'Etc/GMT+15', '-0500']) {
        assert.deepEqual(checkTimezone(tz), bad(`timezone must be an IANA time zone name such as Europe/Berlin; a fixed offset (${tz}) is not accepted`));
      }
      assert.deepEqual(checkTimezone('Berlin'), bad('timezone Berlin is not an IANA time zone name (for example Europe/Berlin or America/New_York)'));
    });
  });

  describe('past and spacing', () => {
    const now = new Date('2026-05-01T10:00:00.000Z');
    it('a send needs a time after now', () => {
      assert.equal(checkScheduleInFuture(new Date('2026-05-01T10:00:00.001Z'), now), null);
      assert.deepEqual(checkScheduleInFuture(now, now), bad('schedule_at 2026-05-01T10:00:00.000Z is in the past; give a future time'));
    });

    it('a draft only notices a past time', () => {
      assert.equal(scheduleInPastNotice(new Date('2026-05-02T00:00:00Z'), now), null);
      assert.deepEqual(scheduleInPastNotice(new Date('2026-04-01T00:00:00Z'), now), {
        code: 'schedule_at_in_past',
        message: 'schedule_at 2026-04-01T00:00:00.000Z has already passed; promote the draft with a new schedule_at or publish: true',
      });
    });

    it('scheduled posts of one account are at least 5 minutes apart', () => {
      const at = new Date('2026-05-01T12:00:00Z');
      assert.equal(checkScheduleSpacing(at, [new Date('2026-05-01T11:55:00Z'), new Date('2026-05-01T12:05:00Z')]), null);
      assert.deepEqual(
        checkScheduleSpacing(at, [new Date('2026-05-01T12:04:59.999Z')]),
        // `passes`: the refusal lifts once the other post moves, so an Idempotency-Key does not replay it.
        { ...bad('schedule_at 2026-05-01T12:00:00.000Z is within 5 minutes of another scheduled post on this account (2026-05-01T12:04:59.999Z); scheduled posts on one account must be at least 5 minutes apart'), passes: true },
      );
      assert.deepEqual(checkScheduleSpacing(at, [at])?.code, 'bad_request');
    });
  });
});
